// Redis's clock (TIME), for what the scripts decide by it: a session or a message has expired
// when Redis's clock, not this instance's, has passed its end, so a reader judges as the
// scripts (lua/player-session.lua, lua/includes/inbox.lua) do.
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis.js';

/** A TIME reply (seconds, microseconds) in ms since the epoch. */
function msOfTime(time: ArrayLike<string | number>): number {
  return Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
}

/** Redis's clock in ms (one TIME; on a cluster, the node ioredis picks). */
export async function redisNowMs(redis: RedisClient): Promise<number> {
  return msOfTime(await redis.time());
}

/**
 * Runs the commands `read` adds in one MULTI after a TIME, so the clock is read on the node of
 * their keys and at the same moment: answers the clock in ms, then their replies in order (a
 * command that failed inside the MULTI is not thrown: its reply is undefined).
 */
export async function readAtRedisNow<R extends unknown[]>(
  redis: RedisClient,
  read: (multi: ChainableCommander) => ChainableCommander,
): Promise<[nowMs: number, ...replies: R]> {
  const [[, time], ...rest] = (await read(redis.multi().time()).exec()) as [[unknown, [string, string]], ...Array<[unknown, unknown]>];
  return [msOfTime(time), ...(rest.map(([, reply]) => reply) as R)];
}
