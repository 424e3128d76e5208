// A per-workspace byte-rate budget on each instance for large answers and large request bodies
// (issue 17, noisy neighbour): a token bucket per workspace in memory, refilled at
// WORKSPACE_BYTES_PER_SECOND up to a burst of one max-size player (MAX_PLAYER_BYTES). Moving a
// 4 MiB answer or a 1 MB body costs this single-threaded process tens of milliseconds of CPU,
// which every other workspace's requests wait behind; the plan's request limit counts requests,
// not bytes, so it cannot bound that. Past the budget: 429 RATE_LIMITED with Retry-After.
// Only large transfers (over LARGE_BYTES) are charged, so ordinary traffic never touches it.
import type { Middleware } from 'koa';
import { byteBudgetExceeded } from '../errors.js';
import type { AppState } from './state.js';

/** Answers and bodies up to this size are not charged (READ_INLINE_BYTES of the store). */
export const LARGE_BYTES = 64 * 1024;
/** Buckets idle this long are full again, so they are dropped. */
const IDLE_SWEEP = 10_000;

interface Bucket {
  tokens: number;
  atMs: number;
}

export class ByteBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    /** Bytes a second per workspace; 0 turns the budget off. */
    readonly bytesPerSecond: number,
    /** Most bytes saved up (one max-size player). */
    readonly burstBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Takes `bytes` from the workspace's bucket or throws 429 RATE_LIMITED. A transfer larger
   * than the burst (a player from before the size limit) passes once the bucket is full and
   * leaves it in debt, so it is never refused for ever.
   */
  charge(workspaceId: string, bytes: number): void {
    if (this.bytesPerSecond <= 0 || bytes <= LARGE_BYTES) return;
    const nowMs = this.now();
    let bucket = this.buckets.get(workspaceId);
    if (!bucket) {
      if (this.buckets.size >= IDLE_SWEEP) this.sweep(nowMs);
      bucket = { tokens: this.burstBytes, atMs: nowMs };
      this.buckets.set(workspaceId, bucket);
    }
    bucket.tokens = Math.min(this.burstBytes, bucket.tokens + ((nowMs - bucket.atMs) * this.bytesPerSecond) / 1000);
    bucket.atMs = nowMs;
    const needed = Math.min(bytes, this.burstBytes);
    if (bucket.tokens < needed) {
      const retryAfter = Math.max(1, Math.ceil((needed - bucket.tokens) / this.bytesPerSecond));
      throw byteBudgetExceeded(this.bytesPerSecond, retryAfter);
    }
    bucket.tokens -= bytes;
  }

  /**
   * Charges a request body by its declared length, before it is read (after authentication).
   * A body over `maxBodyBytes` is not charged: the body reader refuses it with 413 unread.
   */
  bodies(maxBodyBytes: number): Middleware<AppState> {
    return async (ctx, next) => {
      const length = Number(ctx.get('content-length'));
      if (Number.isFinite(length) && length > LARGE_BYTES && length <= maxBodyBytes && ctx.state.principal) {
        this.charge(ctx.state.principal.workspace.id, length);
      }
      await next();
    };
  }

  /** Drops buckets that have refilled completely (they would start full anyway). */
  private sweep(nowMs: number): void {
    for (const [id, bucket] of this.buckets) {
      if (bucket.tokens + ((nowMs - bucket.atMs) * this.bytesPerSecond) / 1000 >= this.burstBytes) this.buckets.delete(id);
    }
  }
}
