// Which Redis masters answer this instance now: what /readyz reports (ops/health.ts).
//
// Each master is asked `SCRIPT EXISTS` for every script, on the connection the service itself
// uses, so a master counts as answering only when a command of ours reaches it in time
// (REDIS_COMMAND_TIMEOUT_MS). A master that answers but lost its script cache (restarted, or a
// replica just promoted) has them loaded again here; it is not a reason to stop serving, since
// ioredis sends the script itself when Redis answers NOSCRIPT (defineCommand), at the cost of one
// round trip with the script's text.
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis.js';
import { SCRIPTS } from './scripts.js';

export interface RedisReach {
  /** Masters this instance knows of (1 on a single server). */
  readonly masters: number;
  /** `host:port` of the masters that answered. */
  readonly answering: readonly string[];
  /** `host:port` of the masters that did not answer (refused, timed out, failing over). */
  readonly notAnswering: readonly string[];
}

function nameOf(node: Redis): string {
  return `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`;
}

/** Asks every master at once; resolves within the command timeout, never rejects. */
export async function redisReach(client: RedisClient): Promise<RedisReach> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const shas = SCRIPTS.map((s) => s.sha1);
  const answered = await Promise.all(
    nodes.map(async (node) => {
      try {
        const flags = (await node.script('EXISTS', ...shas)) as number[];
        const missing = SCRIPTS.filter((_, i) => flags[i] !== 1);
        // Best effort: a master that answers serves, with or without its scripts cached.
        await Promise.all(missing.map((s) => node.script('LOAD', s.lua))).catch(() => {});
        return true;
      } catch {
        return false;
      }
    }),
  );
  return {
    masters: nodes.length,
    answering: nodes.filter((_, i) => answered[i]).map(nameOf),
    notAnswering: nodes.filter((_, i) => !answered[i]).map(nameOf),
  };
}
