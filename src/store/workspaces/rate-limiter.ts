// The fixed-window plan limiter. The window's counter lives in Redis, so every instance of the
// service shares one budget; each instance takes that budget in leases (lua/rate-limit.lua)
// rather than one request at a time, so most requests are counted in process with no Redis
// command.
//
// How a request is decided, per workspace and instance:
// - a leased request is left: take it (synchronous, no Redis);
// - Redis said the window's budget is spent: 429 until the window resets (no Redis);
// - otherwise one lease call for every request waiting at that moment, plus some ahead of
//   time. Concurrent requests of a workspace share that call.
//
// What a lease guarantees: the counter in Redis only grows by what is granted and grants stop
// at the limit, so the instances together never answer more than the plan allows. Leases end
// with their window: an instance uses a lease only until the time it sent the call plus the
// TTL Redis reported, which is never later than the real reset. Requests asked for ahead of
// time come only out of plenty (the script grants them from at most a quarter of what is
// left), and their number grows with each lease in a busy workspace up to
// RATE_LIMIT_LEASE_AHEAD. Requests taken ahead that an instance does not use are lost at the
// window's end; with several instances, that many requests may be refused early when a
// workspace's traffic moves to another instance near its limit. RATE_LIMIT_LEASE_AHEAD=0
// takes only what is waiting: every request is counted in Redis as it comes, and the budget is
// shared exactly.
//
// After a plan change (the workspace cache is invalidated, so the new plan arrives with the
// next request) the limit differs, and the lease taken under the old limit is dropped.
//
// While the window's master does not answer (a cluster failover: about cluster-node-timeout
// plus a second or two), a lease call fails with an "unavailable" error. Rather than refuse the
// workspace's requests (whose players mostly live on other masters), each instance then decides
// alone, from its last share of the window: the part of the window's count it had been granted
// at its last lease. Per window it answers that share of the limit (what it had answered in the
// window in progress counts), then 429 with Retry-After; it asks Redis again at most every
// FALLBACK_RETRY_MS without anyone waiting, and what it answered meanwhile is added to the
// window's count by the first lease that works, whatever the limit. For RATE_LIMIT_FAILOVER_MS at most: past it, 503 until
// Redis answers (docs/reliability.md#the-rate-limiter-during-a-failover). An instance with no
// share (no lease of that workspace lately) answers 503 at once, as does every instance with
// RATE_LIMIT_FAILOVER_MS=0.
import { keys } from '../keys.js';
import { isUnavailableError, nodeOf, type RedisClient } from '../redis/redis.js';
import { UsageCounter } from './usage-counter.js';

export { usageDay, USAGE_RETENTION_DAYS } from './usage-counter.js';

export interface RateLimitResult {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
}

/**
 * What a workspace's first lease on an instance takes ahead (at most RATE_LIMIT_LEASE_AHEAD):
 * it then doubles with each lease (5, 9, 17, 33 requests). Started at nothing (1, 2, 3, 5, 9),
 * a workspace sending a few requests a window took a lease call for nearly every one: 0.26
 * script calls a GET in the bench's 2,000 workspaces at 3,000 requests/s (docs/performance.md).
 * Still granted only out of a quarter of what is left, so near the limit it is no more.
 */
export const FIRST_LEASE_AHEAD = 4;
/** What a workspace takes ahead halves for each this many windows it was idle. */
const HALVE_AFTER_IDLE_WINDOWS = 3;
/** A workspace idle this many windows is forgotten (what it took ahead has halved to nothing). */
const FORGET_AFTER_WINDOWS = 18;
/** While falling back, Redis is asked again (one lease, nobody waiting for it) at most this often. */
const FALLBACK_RETRY_MS = 250;

/** A workspace decided in process while its window's master does not answer. */
interface Fallback {
  /** When the first lease call failed: the bound counts from here. */
  readonly since: number;
  /** The last lease call's error, thrown past the bound. */
  error: unknown;
  /** When the last lease call was sent. */
  lastTry: number;
  /** Requests per window: the instance's share of the limit. */
  readonly budget: number;
  /** End of the window being counted in process. */
  until: number;
  /** Requests this instance may still answer in it. */
  left: number;
}

/** One workspace's window as this instance knows it. */
interface Window {
  readonly limit: number;
  /** Epoch ms by which the window has reset, at the latest. */
  until: number;
  /** Leased requests not yet used. */
  tokens: number;
  /** The window's count in Redis after the last lease (this instance's unused tokens included). */
  count: number;
  /** Requests to ask for ahead of time with the next lease. */
  extra: number;
  /** Requests waiting for the lease under way. */
  waiting: number;
  leasing: Promise<void> | undefined;
  /** Requests granted to this instance in this window. */
  mine: number;
  /** This instance's part of the window's count at its last lease (0..1); undefined before any. */
  share: number | undefined;
  /** Set while the window's master does not answer. */
  fallback: Fallback | undefined;
  /** Requests answered in process during a fallback, to charge to the window at the next lease. */
  debt: number;
  /** Charges whose call timed out, with the node it was sent to: run there late, or lost with it. */
  unsure: Array<{ readonly node: string; readonly charged: number }>;
}

export interface RateLimiterOptions {
  readonly windowMs: number;
  /** Most requests one lease may take ahead of time; 0 takes only what is waiting. */
  readonly leaseAhead: number;
  /** How often usage counts are written and idle windows forgotten. */
  readonly usageFlushMs: number;
  /** How long a workspace is decided from this instance's last share while its window's master does not answer; 0: not at all. */
  readonly failoverMs: number;
  readonly clock?: () => number;
}

export class RateLimiter {
  private readonly windows = new Map<string, Window>();
  readonly usage: UsageCounter;
  private readonly windowMs: number;
  private readonly windowArg: string;
  private readonly leaseAhead: number;
  private readonly usageFlushMs: number;
  private readonly failoverMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly redis: RedisClient,
    options: RateLimiterOptions,
  ) {
    this.windowMs = options.windowMs;
    this.windowArg = String(options.windowMs);
    this.leaseAhead = Math.max(0, options.leaseAhead);
    this.usageFlushMs = options.usageFlushMs;
    this.failoverMs = options.failoverMs;
    this.clock = options.clock ?? Date.now;
    this.usage = new UsageCounter(redis);
  }

  /**
   * The verdict for one request of the workspace, counted in its usage. Synchronous when this
   * instance can decide alone (a leased request is left, or the budget is known to be spent);
   * a promise when it must take a lease from Redis first.
   */
  hit(workspaceId: string, limit: number, nowMs: number): RateLimitResult | Promise<RateLimitResult> {
    let w = this.windows.get(workspaceId);
    if (w === undefined || w.limit !== limit || (w.until <= nowMs && w.leasing === undefined && w.fallback === undefined)) {
      // A workspace busy in the last windows is likely busy in this one: it keeps what it took
      // ahead, halved for every few whole windows it was idle.
      const idleWindows = w?.limit === limit ? Math.floor((nowMs - w.until) / this.windowMs) : 0;
      const extra = w?.limit === limit ? Math.max(FIRST_LEASE_AHEAD, w.extra >> Math.min(31, Math.floor(idleWindows / HALVE_AFTER_IDLE_WINDOWS))) : FIRST_LEASE_AHEAD;
      w = { limit, until: 0, tokens: 0, count: 0, extra, waiting: 0, leasing: undefined, mine: 0, share: w?.share, fallback: undefined, debt: 0, unsure: [] };
      this.windows.set(workspaceId, w);
    }
    if (w.fallback !== undefined) return this.fromShare(workspaceId, w, w.fallback, nowMs);
    if (w.until > nowMs) {
      if (w.tokens > 0) {
        w.tokens--;
        this.usage.count(workspaceId, nowMs, false);
        return { allowed: true, limit, remaining: Math.max(0, limit - w.count + w.tokens), resetMs: w.until - nowMs };
      }
      if (w.count >= limit) {
        this.usage.count(workspaceId, nowMs, true);
        return { allowed: false, limit, remaining: 0, resetMs: w.until - nowMs };
      }
    }
    return this.afterLease(workspaceId, w);
  }

  /** Waits for a lease (starting one when none is under way), then decides again. */
  private async afterLease(workspaceId: string, w: Window): Promise<RateLimitResult> {
    w.waiting++;
    try {
      w.leasing ??= this.lease(workspaceId, w).finally(() => {
        w.leasing = undefined;
      });
      await w.leasing;
    } finally {
      w.waiting--;
    }
    return this.hit(workspaceId, w.limit, this.clock());
  }

  private async lease(workspaceId: string, w: Window): Promise<void> {
    const sentAt = this.clock();
    // What was answered in process during a fallback is charged to the window now, whatever
    // the limit (lua/rate-limit.lua), so every instance's fallback counts.
    const debt = w.debt;
    const need = Math.max(1, w.waiting);
    const extra = Math.min(w.extra, this.leaseAhead);
    const key = keys.rateLimit(workspaceId);
    const node = nodeOf(this.redis, key);
    let reply: [granted: number, count: number, ttl: number];
    try {
      reply = await this.redis.rateLimit(key, String(w.limit), this.windowArg, String(need), String(extra), String(debt));
    } catch (err) {
      // A call that timed out may still run, charge and all, when its master gets to it (a
      // stalled one): not charged again unless the window has moved to another master since.
      if (debt > 0 && err instanceof Error && /Command timed out/.test(err.message)) {
        w.debt -= debt;
        w.unsure.push({ node, charged: debt });
      }
      if (!this.fallBack(w, err, sentAt)) throw err;
      return;
    }
    const [granted, count, ttl] = reply;
    // Charges that timed out on a master the window has left were lost with it.
    const now = nodeOf(this.redis, key);
    const lost = w.unsure.reduce((sum, u) => sum + (u.node === now ? 0 : u.charged), 0);
    w.unsure = [];
    // Answered during the call, and lost: charged by the next lease, unless the window is spent anyway.
    w.debt = count >= w.limit ? 0 : w.debt - debt + lost;
    w.fallback = undefined;
    // A new window in Redis (count is only what this call added) starts this instance's part again.
    w.mine = (count === granted + debt ? 0 : w.mine) + granted + debt;
    if (count > 0) w.share = Math.min(1, w.mine / count);
    w.until = sentAt + ttl;
    w.count = count;
    w.tokens = granted;
    if (granted > 0) w.extra = Math.min(this.leaseAhead, Math.max(FIRST_LEASE_AHEAD, w.extra * 2));
  }

  /**
   * After a lease call failed with `err`: starts (or goes on with) deciding in process, and says
   * whether it does. Not for a bug (only for Redis being unavailable), nor without a share.
   */
  private fallBack(w: Window, err: unknown, sentAt: number): boolean {
    if (w.fallback !== undefined) {
      w.fallback.error = err;
      return true;
    }
    if (this.failoverMs === 0 || w.share === undefined || !isUnavailableError(err)) return false;
    const budget = Math.ceil(w.limit * w.share);
    const now = this.clock();
    // In the window in progress, what this instance already answered counts; leased requests in
    // hand are its own in any case.
    const inWindow = w.until > now;
    const used = inWindow ? w.mine - w.tokens : 0;
    const left = Math.max(w.tokens, budget - used);
    w.tokens = 0;
    w.fallback = { since: now, error: err, lastTry: sentAt, budget, until: inWindow ? w.until : now + this.windowMs, left };
    return true;
  }

  /** The verdict while the window's master does not answer; see the header. */
  private fromShare(workspaceId: string, w: Window, f: Fallback, nowMs: number): RateLimitResult | Promise<RateLimitResult> {
    if (w.leasing === undefined && nowMs - f.lastTry >= FALLBACK_RETRY_MS) {
      f.lastTry = nowMs;
      w.leasing = this.lease(workspaceId, w)
        .catch(() => {})
        .finally(() => {
          w.leasing = undefined;
        });
    }
    if (nowMs - f.since > this.failoverMs) return Promise.reject(f.error);
    if (f.until <= nowMs) {
      f.until = nowMs + this.windowMs;
      f.left = f.budget;
    }
    const limited = f.left <= 0;
    this.usage.count(workspaceId, nowMs, limited);
    if (limited) return { allowed: false, limit: w.limit, remaining: 0, resetMs: f.until - nowMs };
    f.left--;
    w.debt++;
    return { allowed: true, limit: w.limit, remaining: f.left, resetMs: f.until - nowMs };
  }

  /** Starts the timer that writes usage counts and forgets idle windows. */
  start(): void {
    this.usage.start(this.usageFlushMs, () => this.forgetIdle());
  }

  private forgetIdle(): void {
    // Idle for this many windows, a workspace would take nothing ahead any more: forget it.
    const stale = this.clock() - FORGET_AFTER_WINDOWS * this.windowMs;
    for (const [workspaceId, w] of this.windows) {
      if (w.until <= stale && w.leasing === undefined && w.fallback === undefined) this.windows.delete(workspaceId);
    }
  }

  /** Workspaces this instance holds a window for. */
  get size(): number {
    return this.windows.size;
  }

  /** Stops the timer and writes the usage counted so far. */
  async stop(): Promise<void> {
    await this.usage.stop();
  }
}
