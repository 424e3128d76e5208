// Erased data stays in Redis's persistence files until they are rewritten: an AOF holds the
// commands that wrote it until its next rewrite, an RDB snapshot until the next save. After
// erasures, when ERASURE_AOF_REWRITE_HOURS is set, every node (replicas too, on a cluster)
// rewrites its AOF, or saves its RDB when it keeps no AOF, at most once per that interval
// across all instances (a window key), and no sooner than an erasure made it due.
import { Cluster, type Redis } from 'ioredis';
import { keys } from '../keys.js';
import type { RedisClient } from './redis.js';

export interface RewriteResult {
  /** `host:port BGREWRITEAOF` or `host:port BGSAVE` for each node asked. */
  readonly started: string[];
  readonly failed: string[];
}

/** An erasure finished: the next rewrite removes what it erased from the files. */
export async function markRewriteDue(redis: RedisClient): Promise<void> {
  await redis.set(keys.erasureRewriteDue(), '1');
}

function nodesOf(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('all') : [redis];
}

export async function rewriteIfDue(redis: RedisClient, intervalMs: number): Promise<RewriteResult> {
  const result: RewriteResult = { started: [], failed: [] };
  if ((await redis.exists(keys.erasureRewriteDue())) === 0) return result;
  if ((await redis.set(keys.erasureRewriteWindow(), '1', 'PX', intervalMs, 'NX')) !== 'OK') return result;
  // Cleared before the rewrites fork: an erasure that finishes after this sets it again, and
  // one that finished before is in the forked copy.
  await redis.del(keys.erasureRewriteDue());
  let retry = false;
  for (const node of nodesOf(redis)) {
    const name = `${node.options.host ?? '?'}:${node.options.port ?? '?'}`;
    try {
      const aof = /aof_enabled:1/.test(await node.info('persistence'));
      await (aof ? node.bgrewriteaof() : node.bgsave('SCHEDULE'));
      result.started.push(`${name} ${aof ? 'BGREWRITEAOF' : 'BGSAVE'}`);
    } catch (err) {
      // A rewrite already running may have forked before the erasure, and a managed Redis may
      // refuse the command: due again, tried once the interval has passed (not every poll).
      retry = true;
      result.failed.push(`${name}: ${(err as Error).message}`);
    }
  }
  if (retry) await redis.set(keys.erasureRewriteDue(), '1');
  return result;
}
