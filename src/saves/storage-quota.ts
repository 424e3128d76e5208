// The storage quota of a workspace by plan: a write that adds data to a workspace at or over its
// quota is 403 STORAGE_QUOTA_EXCEEDED; deletes always pass. What the quota weighs is what Redis
// holds for the workspace's data (estimated from the counted bytes, store/players/redis-memory.ts),
// leaderboards, kept answers, waiting messages and players held without data, never history:
// history keeps within its own bound, shed by saves/history-sweep.ts, so a workspace full of
// history still saves. Players held without data weigh on taking more of them (an acquire of a
// player without data, refused in its script), not on saves: a quota full of held players still
// takes their saves, whose first data takes each off the held players. Checked against what this instance
// knows of the workspace's total (store/workspaces/storage-usage.ts), so the check costs no Redis call
// while that is fresh. The bound on overshoot: the write that crosses the quota (at most
// MAX_BODY_BYTES) plus what other instances wrote in their last STORAGE_FLUSH_MS, or since
// this instance last read the total (STORAGE_REFRESH_MS) when it has no writes of its own.
import type { Config } from '../config.js';
import type { Plan } from '../domain/types.js';
import { AppError, ErrorCode } from '../errors.js';
import { estimatedRedisBytes } from '../store/players/redis-memory.js';
import { storedBytesOf, type PlayerWrite, type Replayable, type SessionReply, type SessionRequest, type StorageDelta } from '../store/players/script-protocol.js';
import type { StorageTotals, StorageUsage } from '../store/workspaces/storage-usage.js';

/** The counted bytes of the players' data (key names and stored entries): `bytes` less everything else. */
export const dataBytesOf = (t: StorageTotals): number => t.bytes - t.historyBytes - t.boardBytes - t.keptBytes - t.messageBytes - t.sessionBytes;

/**
 * What the quota weighs, and the console and the admin API show as used: the players' data as
 * Redis holds it (1.2 x its counted bytes + 150 B a player, within ±20% of MEMORY USAGE), the
 * boards, kept answers and waiting messages as counted, the players held without data as Redis
 * holds them; not history.
 */
export const quotaBytesOf = (t: StorageTotals): number =>
  estimatedRedisBytes(dataBytesOf(t), t.players) + t.boardBytes + t.keptBytes + t.messageBytes + t.sessionBytes;

/** What a save is weighed by: quotaBytesOf without the players held without data (they weigh on acquires only). */
export const saveBytesOf = (t: StorageTotals): number => quotaBytesOf(t) - t.sessionBytes;

/**
 * What a player held without data costs Redis, as lua/includes/session.lua's heldBytes counts it
 * from its session field `<id>|<expires ms>|<lease ms>|<owner>`.
 */
export function heldBytesOf(sessionId: string, owner: string, leaseMs: number): number {
  return heldBytesOfField(sessionId.length + owner.length + String(leaseMs).length + 16);
}

/** heldBytesOf from the session field's length. */
export const heldBytesOfField = (fieldLength: number): number => (fieldLength > 64 ? 520 : 185) + fieldLength;

/** How long a write's answer is kept for its Idempotency-Key, as the workspace's state decides. */
export interface KeepVerdict {
  readonly keepSeconds: number;
  /** At or over the quota (what passes: deletes, releases, reads). */
  readonly over: boolean;
  /** Bytes this request holds against the quota until its writes are counted (holding). */
  readonly held?: number;
}

/** The most a write can add: each set's key and value, and its entry's `[updated_at,]` (16 B). */
export function mostAddedBytes(writes: readonly PlayerWrite[]): number {
  let bytes = 0;
  for (const write of writes) if (!write.deleteAll) for (const op of write.ops) if (op.op !== 'delete') bytes += op.key.length + 16 + (op.op === 'set' ? op.valueJson.length : 24);
  return bytes;
}

/** mostAddedBytes as the quota weighs it: Redis bytes, each adding write a player that may be new. */
function mostAddedRedisBytes(writes: readonly PlayerWrite[]): number {
  const bytes = mostAddedBytes(writes);
  return bytes === 0 ? 0 : estimatedRedisBytes(bytes, writes.filter((w) => !w.deleteAll && w.ops.some((op) => op.op !== 'delete')).length);
}

/** The most the acquires among `sessions` can hold without data (each player may have none). */
function mostHeldBytes(sessions: readonly SessionRequest[]): number {
  let bytes = 0;
  for (const s of sessions) if (s.action === 'acquire') bytes += heldBytesOf(s.sessionId, s.owner ?? '', s.ttlMs ?? 0);
  return bytes;
}

export class StorageQuota {
  /**
   * Per workspace, the bytes of writes that passed the quota and are not counted yet (their
   * scripts still running): one instance's concurrent writes see each other, so it stops at the
   * write that crosses the quota (60 concurrent sets of 60 KB against 300,000 B were all taken
   * when each saw only what was counted).
   */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly usage: StorageUsage,
    private readonly quotaBytes: Config['storage']['quotaBytes'],
    /** IDEMPOTENCY_TTL_SECONDS, and the shorter time a workspace over its quota keeps answers. */
    private readonly keep: { readonly seconds: number; readonly overQuotaSeconds: number } = { seconds: 86_400, overQuotaSeconds: 600 },
    /** Told each workspace's plan as its requests say it (saves/quota-warnings.ts weighs totals by it). */
    private readonly notePlan?: (workspaceId: string, plan: Plan) => void,
  ) {}

  /**
   * Refuses a write that may add data (`adding`) to a workspace at or over its quota; for what
   * passes, how long its answer is kept: a workspace over its quota still deletes, but keeps
   * each answer IDEMPOTENCY_TTL_OVER_QUOTA_SECONDS rather than a day, so what it can still make
   * Redis keep is bounded by its request rate times that (docs/safe-saves.md).
   */
  verdict(
    workspaceId: string,
    plan: Plan,
    adding: boolean,
    nowMs: number,
    writes: readonly PlayerWrite[] = [],
    /** Sessions to acquire (players that may be held without data): weighed with held players, and held too. */
    sessions: readonly SessionRequest[] = [],
  ): KeepVerdict | Promise<KeepVerdict> {
    this.notePlan?.(workspaceId, plan);
    const totals = this.usage.current(workspaceId, nowMs);
    const take = (t: StorageTotals) => {
      const acquiring = sessions.some((s) => s.action === 'acquire');
      const verdict = this.keepFor(plan, t, adding, this.inFlight.get(workspaceId) ?? 0, acquiring);
      const held = (adding ? mostAddedRedisBytes(writes) : 0) + mostHeldBytes(sessions);
      if (held === 0) return verdict;
      this.inFlight.set(workspaceId, (this.inFlight.get(workspaceId) ?? 0) + held);
      return { ...verdict, held };
    };
    return totals instanceof Promise ? totals.then(take) : take(totals);
  }

  /**
   * Runs `work` (which records what its writes stored) holding the verdict's bytes against the
   * quota, and lets them go once it is done: the check and the hold are one synchronous step, so
   * two writes of one instance never both pass on the same room.
   */
  async holding<T>(workspaceId: string, verdict: KeepVerdict | Promise<KeepVerdict>, work: () => Promise<T>): Promise<T> {
    const { held } = await verdict;
    try {
      return await work();
    } finally {
      if (held) {
        const left = (this.inFlight.get(workspaceId) ?? 0) - held;
        if (left > 0) this.inFlight.set(workspaceId, left);
        else this.inFlight.delete(workspaceId);
      }
    }
  }

  /** Bytes of messages waiting until `expiresAtMs` (negative: acknowledged or removed). */
  recordMessages(workspaceId: string, bytes: number, expiresAtMs: number): void {
    this.usage.recordMessages(workspaceId, bytes, expiresAtMs);
  }

  /** Bytes of answers kept for Idempotency-Keys until `expiresAtMs` (they count until then). */
  recordKept(workspaceId: string, bytes: number, expiresAtMs: number): void {
    this.usage.recordKept(workspaceId, bytes, expiresAtMs);
  }

  /**
   * `over` for an acquire weighs the players held without data too (the script refuses one
   * of a player without data then); a save is weighed without them.
   */
  private keepFor(plan: Plan, totals: StorageTotals, adding: boolean, inFlight = 0, acquiring = false): KeepVerdict {
    const weighed = acquiring ? quotaBytesOf(totals) : saveBytesOf(totals);
    if (weighed + inFlight < this.quotaBytes[plan]) return { keepSeconds: this.keep.seconds, over: false };
    if (adding) this.judge(plan, totals, inFlight);
    return { keepSeconds: Math.min(this.keep.seconds, this.keep.overQuotaSeconds), over: true };
  }

  /** Refuses a write that adds data to a workspace at or over its plan's quota. */
  check(workspaceId: string, plan: Plan, write: PlayerWrite, nowMs: number): void | Promise<void> {
    if (write.deleteAll || write.ops.every((op) => op.op === 'delete')) return;
    return this.checkAdding(workspaceId, plan, nowMs);
  }

  /** Refuses anything that may add data (a write, a leaderboard entry) at or over the quota. */
  checkAdding(workspaceId: string, plan: Plan, nowMs: number): void | Promise<void> {
    this.notePlan?.(workspaceId, plan);
    const totals = this.usage.current(workspaceId, nowMs);
    if (totals instanceof Promise) return totals.then((t) => this.judge(plan, t));
    return this.judge(plan, totals);
  }

  /** What an applied (not replayed) write changed. */
  record(workspaceId: string, delta: StorageDelta): void {
    this.usage.record(workspaceId, storedBytesOf(delta), delta.players, delta.historyBytes);
    if (delta.held) this.usage.recordSessions(workspaceId, delta.held);
  }

  /** What a session call (not replayed) changed: a player without data held, moved or released. */
  recordSession(workspaceId: string, reply: Replayable<SessionReply>): void {
    if (!reply.replayed && reply.reply.applied && reply.reply.held) this.usage.recordSessions(workspaceId, reply.reply.held);
  }

  /**
   * A write whose outcome is unknown (OUTCOME_UNKNOWN) may have stored what it sets: counted
   * at once as if it had (so the quota holds meanwhile), and the workspace recounted from its
   * players a few seconds later, which replaces the guess with what Redis holds.
   */
  unknownOutcome(workspaceId: string, write: PlayerWrite, nowMs: number): void {
    let bytes = 0;
    if (!write.deleteAll) for (const op of write.ops) if (op.op === 'set') bytes += op.key.length + op.valueJson.length;
    this.usage.record(workspaceId, bytes, 0);
    this.usage.scheduleRecount(workspaceId, nowMs);
  }

  private judge(plan: Plan, totals: StorageTotals, inFlight = 0): void {
    const quota = this.quotaBytes[plan];
    const counted = saveBytesOf(totals) + inFlight;
    if (counted >= quota) {
      throw new AppError(
        ErrorCode.STORAGE_QUOTA_EXCEEDED,
        `The workspace stores ${counted} bytes, the ${plan} plan's quota is ${quota}: delete data, or move to a larger plan`,
      );
    }
  }
}
