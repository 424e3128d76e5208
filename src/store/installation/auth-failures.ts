// Failed credentials counted per caller address in Redis, so that every instance (and worker)
// behind a port counts against one budget: the console's sign-in and the admin API's bearer
// token. A fixed window: the counter is made with its TTL, then incremented, in one
// transaction; a counter that lost its TTL (PTTL -1) is given one again, so it can never block
// an address for ever.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export interface FailureCount {
  /** Failures in the current window. */
  readonly count: number;
  /** Milliseconds left of the window (0 when no window is open). */
  readonly resetMs: number;
}

/** Counts one failure under `key`; the answer includes it. */
export async function countFailure(redis: RedisClient, key: string, windowMs: number): Promise<FailureCount> {
  const replies = await redis.multi().set(key, '0', 'PX', windowMs, 'NX').incr(key).pttl(key).exec();
  const [err, count] = replies?.[1] ?? [new Error('the failure count transaction was discarded'), 0];
  if (err) throw err;
  let ttl = Number(replies?.[2]?.[1] ?? -1);
  if (ttl === -1) {
    await redis.pexpire(key, windowMs);
    ttl = windowMs;
  }
  return { count: Number(count), resetMs: Math.max(ttl, 0) };
}

/** The failures counted under `key` in the current window, without adding one. */
export async function readFailures(redis: RedisClient, key: string): Promise<FailureCount> {
  const [count, ttl] = await Promise.all([redis.get(key), redis.pttl(key)]);
  return { count: Number(count ?? 0), resetMs: Math.max(ttl, 0) };
}

/** The failures of each caller under one kind of credential, in windows of `windowMs`. */
export class FailureCounter {
  constructor(
    private readonly redis: RedisClient,
    private readonly keyOf: (subject: string) => string,
    private readonly windowMs: number,
  ) {}

  count(subject: string): Promise<FailureCount> {
    return countFailure(this.redis, this.keyOf(subject), this.windowMs);
  }

  read(subject: string): Promise<FailureCount> {
    return readFailures(this.redis, this.keyOf(subject));
  }
}

/** Wrong bearer tokens sent to the admin API, by caller (keys.adminAuthFailures). */
export function adminAuthFailures(redis: RedisClient, windowMs: number): FailureCounter {
  return new FailureCounter(redis, keys.adminAuthFailures, windowMs);
}
