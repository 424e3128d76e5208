// The fixed-window plan limiter: one Lua script call per request (lua/rate-limit.lua), which
// also counts the request in the workspace's daily usage.
import { keys } from './keys.js';
import type { RedisClient } from './redis.js';

export interface RateLimitResult {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
}

/** Days of usage history kept (a day's counters expire after this many days). */
export const USAGE_RETENTION_DAYS = 31;

export function usageDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10).replaceAll('-', '');
}

export class RateLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly windowMs: number,
  ) {}

  async hit(workspaceId: string, limit: number, nowMs: number): Promise<RateLimitResult> {
    const [count, ttl] = await this.redis.rateLimit(
      keys.rateLimit(workspaceId),
      keys.usage(workspaceId, usageDay(nowMs)),
      String(limit),
      String(this.windowMs),
      String(USAGE_RETENTION_DAYS * 86_400),
    );
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetMs: ttl,
    };
  }
}
