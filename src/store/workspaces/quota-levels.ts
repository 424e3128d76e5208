// The storage-quota warning level each workspace was last logged at (saves/quota-warnings.ts),
// shared by every instance so that a crossing is logged once across the fleet, and the
// overview's list of workspaces near their quota.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/** How long a level's marker lives: a workspace that stays near its quota is logged again at most this often. */
export const QUOTA_LEVEL_TTL_SECONDS = 7 * 86_400;

/**
 * Sets the workspace's level (0: under every warning) and answers the level it had before,
 * in one command (SET ... GET, or GETDEL for 0), so of several instances seeing the same
 * crossing only the first is answered the old level. Keeps the overview's sorted set with it.
 */
export async function swapQuotaLevel(redis: RedisClient, workspaceId: string, level: number, share: number): Promise<number> {
  const key = keys.workspaceQuotaLevel(workspaceId);
  if (level === 0) {
    const [before] = await Promise.all([redis.getdel(key), redis.zrem(keys.statsQuotaWarnings(), workspaceId)]);
    return Number(before ?? 0);
  }
  const [before] = await Promise.all([
    redis.set(key, String(level), 'EX', QUOTA_LEVEL_TTL_SECONDS, 'GET'),
    redis.zadd(keys.statsQuotaWarnings(), share, workspaceId),
  ]);
  return Number(before ?? 0);
}

/** The workspaces that crossed a warning level and are not back under it, highest share first (as of their crossing). */
export async function readQuotaWarned(redis: RedisClient, count: number): Promise<string[]> {
  return redis.zrevrange(keys.statsQuotaWarnings(), 0, count - 1);
}

/** Forgets a workspace (deleted) in the overview's list. */
export async function forgetQuotaWarned(redis: RedisClient, workspaceId: string): Promise<void> {
  await redis.zrem(keys.statsQuotaWarnings(), workspaceId);
}
