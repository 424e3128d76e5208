// The intents of writes in flight to keys that boards follow (keys.followPending, in shards; written and
// swept by boards/followed-writes.ts), seen from the erasure: an intent names its workspace and
// player (`[workspaceId, userId, nowMs, nonce]`), and a sweep of it after the erasure would
// write the player's id back on the boards' followed versions.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/**
 * Removes the intents naming this player in this workspace, from every shard (and the key of
 * the release before); answers how many. Each holds only writes in flight: one ZSCAN walks it.
 */
export async function removeFollowIntents(redis: RedisClient, workspaceId: string, userId: string): Promise<number> {
  const removed = await Promise.all(keys.followPendingAll().map((key) => removeFrom(redis, key, workspaceId, userId)));
  return removed.reduce((a, b) => a + b, 0);
}

async function removeFrom(redis: RedisClient, key: string, workspaceId: string, userId: string): Promise<number> {
  const mine: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.zscan(key, cursor, 'COUNT', 1000);
    cursor = next;
    for (let i = 0; i < page.length; i += 2) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(page[i]!);
      } catch {
        continue;
      }
      if (Array.isArray(parsed) && parsed[0] === workspaceId && parsed[1] === userId) mine.push(page[i]!);
    }
  } while (cursor !== '0');
  return mine.length > 0 ? redis.zrem(key, ...mine) : 0;
}
