// Remembers, per workspace, "over its limit until T", so that a workspace hammering the API
// past its plan gets its 429s without a Redis round trip.
//
// Why this is safe across instances: the window counter only grows until the window's key
// expires, so once Redis has counted past the limit every instance would refuse until the
// reset. T is the time this request started plus the TTL Redis reported, which is never
// later than the real reset. The hint holds the limit it was taken under: after a plan
// change (the workspace cache is invalidated, so the new plan arrives with the next request)
// the limit differs and the hint is ignored. What the hint cannot see is an operator deleting
// the window key by hand; that waits at most until T, one window.
//
// Requests refused here are still counted in the workspace's daily usage: they are added up
// in process and written by `drain` (the limiter calls it about once a second).

export interface LimitHint {
  readonly limit: number;
  /** Epoch ms at which the window resets, at the latest. */
  readonly until: number;
}

export interface PendingUsage {
  readonly workspaceId: string;
  /** Requests refused locally since the last drain (each is a request and a limited one). */
  readonly limited: number;
}

export class LimitHints {
  private readonly hints = new Map<string, LimitHint>();
  private readonly pending = new Map<string, number>();

  /** Records what Redis just said: over the limit until `until`. */
  remember(workspaceId: string, limit: number, until: number): void {
    this.hints.set(workspaceId, { limit, until });
  }

  /**
   * The ms left until the reset when this request can be refused locally, else undefined.
   * A refusal is counted for the usage drain.
   */
  refuse(workspaceId: string, limit: number, nowMs: number): number | undefined {
    const hint = this.hints.get(workspaceId);
    if (hint === undefined) return undefined;
    if (hint.until <= nowMs || hint.limit !== limit) {
      this.hints.delete(workspaceId);
      return undefined;
    }
    this.pending.set(workspaceId, (this.pending.get(workspaceId) ?? 0) + 1);
    return hint.until - nowMs;
  }

  /** Hands over the usage counted since the last drain, and forgets expired hints. */
  drain(nowMs: number): PendingUsage[] {
    const out: PendingUsage[] = [];
    for (const [workspaceId, limited] of this.pending) out.push({ workspaceId, limited });
    this.pending.clear();
    for (const [workspaceId, hint] of this.hints) if (hint.until <= nowMs) this.hints.delete(workspaceId);
    return out;
  }

  get size(): number {
    return this.hints.size;
  }
}
