// The fixed-window plan limiter: one Lua script call per request (lua/rate-limit.lua), which
// also counts the request in the workspace's daily usage. A workspace already over its limit
// is refused in process until its window resets (limit-hints.ts), without Redis.
import { keys } from './keys.js';
import { LimitHints } from './limit-hints.js';
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

/** How often the usage of locally refused requests is written to Redis. */
export const USAGE_FLUSH_MS = 1000;

const DAY_MS = 86_400_000;
/** The last day computed: formatting a date on every request showed up in the CPU profile. */
let cachedDay = { start: 0, name: '' };

export function usageDay(nowMs: number): string {
  const start = nowMs - (nowMs % DAY_MS);
  if (start !== cachedDay.start) {
    cachedDay = { start, name: new Date(start).toISOString().slice(0, 10).replaceAll('-', '') };
  }
  return cachedDay.name;
}

export class RateLimiter {
  readonly hints = new LimitHints();
  private timer: NodeJS.Timeout | undefined;
  private readonly windowArg: string;
  private readonly retentionArg = String(USAGE_RETENTION_DAYS * 86_400);

  constructor(
    private readonly redis: RedisClient,
    windowMs: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.windowArg = String(windowMs);
  }

  /**
   * The refusal when the workspace is known to be over its limit until its window resets;
   * undefined when only Redis can tell. Synchronous, so a refused request does no other work.
   */
  refuseLocally(workspaceId: string, limit: number, nowMs: number): RateLimitResult | undefined {
    const left = this.hints.refuse(workspaceId, limit, nowMs);
    return left === undefined ? undefined : { allowed: false, limit, remaining: 0, resetMs: left };
  }

  async hit(workspaceId: string, limit: number, nowMs: number): Promise<RateLimitResult> {
    const refused = this.refuseLocally(workspaceId, limit, nowMs);
    if (refused) return refused;
    const [count, ttl] = await this.redis.rateLimit(
      keys.rateLimit(workspaceId),
      keys.usage(workspaceId, usageDay(nowMs)),
      String(limit),
      this.windowArg,
      this.retentionArg,
    );
    const allowed = count <= limit;
    if (!allowed) {
      this.hints.remember(workspaceId, limit, nowMs + ttl);
      // The flush also forgets expired hints, so the map never outgrows the workspaces over limit.
      this.timer ??= setInterval(() => void this.flush().catch(() => {}), USAGE_FLUSH_MS).unref();
    }
    return { allowed, limit, remaining: Math.max(0, limit - count), resetMs: ttl };
  }

  /** Writes the usage of the requests refused in process since the last flush. */
  async flush(): Promise<void> {
    const now = this.clock();
    const pending = this.hints.drain(now);
    if (pending.length === 0) return;
    const day = usageDay(now);
    await Promise.all(
      pending.flatMap(({ workspaceId, limited }) => {
        const usage = keys.usage(workspaceId, day);
        return [
          this.redis.hincrby(usage, 'requests', limited),
          this.redis.hincrby(usage, 'limited', limited),
          this.redis.expire(usage, USAGE_RETENTION_DAYS * 86_400),
        ];
      }),
    );
  }

  /** Stops the flush timer and writes what is pending. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
