// Walks every key matching a pattern on every master (one node, or each master of a cluster),
// a page at a time with SCAN, so no single command blocks Redis. Used to count and to erase a
// workspace's players, whose hashes are spread over the whole cluster.
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis.js';

/** Keys asked for per SCAN call; also the size of each UNLINK batch. */
export const SCAN_PAGE = 1000;

export function masters(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/**
 * Calls `onPage` with each non-empty page of matching keys and the node that holds them.
 * Keys added or removed during the walk may or may not be seen (SCAN's guarantee); keys
 * present from start to end are seen at least once.
 */
export async function scanMatching(
  redis: RedisClient,
  pattern: string,
  onPage: (node: Redis, keys: string[]) => Promise<void>,
): Promise<void> {
  for (const node of masters(redis)) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_PAGE);
      cursor = next;
      if (found.length > 0) await onPage(node, found);
    } while (cursor !== '0');
  }
}

/**
 * Counts matching keys in O(1) memory. SCAN can return a key twice while Redis resizes its
 * table, so under heavy growth the count may be a little high; it is a usage figure, not a bill.
 */
export async function countMatching(redis: RedisClient, pattern: string): Promise<number> {
  let total = 0;
  await scanMatching(redis, pattern, async (_node, found) => {
    total += found.length;
  });
  return total;
}

/**
 * UNLINKs every matching key, a page at a time, each page in one pipeline on the node that
 * holds it (one key per UNLINK, since keys of different slots may not share a command on a
 * cluster). Returns how many keys were removed. Safe to run again after an interruption.
 */
export async function unlinkMatching(
  redis: RedisClient,
  pattern: string,
  onPage?: (removedSoFar: number) => void | Promise<void>,
  /** Which removed keys to count (all by default): a player's data hash, not its history. */
  counts: (key: string) => boolean = () => true,
): Promise<number> {
  let removed = 0;
  await scanMatching(redis, pattern, async (node, found) => {
    const replies = (await node.pipeline(found.map((key) => ['unlink', key])).exec()) ?? [];
    for (const [i, [err, n]] of replies.entries()) {
      if (err) throw err;
      if (counts(found[i]!)) removed += n as number;
    }
    await onPage?.(removed);
  });
  return removed;
}
