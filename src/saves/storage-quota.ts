// The storage quota of a workspace by plan: a write that adds data to a workspace at or over its
// quota is 403 STORAGE_QUOTA_EXCEEDED; deletes always pass. Checked against what this instance
// knows of the workspace's total (store/workspaces/storage-usage.ts), so the check costs no Redis call
// while that is fresh. The bound on overshoot: the write that crosses the quota (at most
// MAX_BODY_BYTES) plus what other instances wrote in their last STORAGE_FLUSH_MS, or since
// this instance last read the total (STORAGE_REFRESH_MS) when it has no writes of its own.
import type { Config } from '../config.js';
import type { Plan } from '../domain/types.js';
import { AppError, ErrorCode } from '../errors.js';
import { storedBytesOf, type PlayerWrite, type StorageDelta } from '../store/players/script-protocol.js';
import type { StorageTotals, StorageUsage } from '../store/workspaces/storage-usage.js';

export class StorageQuota {
  constructor(
    private readonly usage: StorageUsage,
    private readonly quotaBytes: Config['storage']['quotaBytes'],
  ) {}

  /** Refuses a write that adds data to a workspace at or over its plan's quota. */
  check(workspaceId: string, plan: Plan, write: PlayerWrite, nowMs: number): void | Promise<void> {
    if (write.deleteAll || write.ops.every((op) => op.op === 'delete')) return;
    const totals = this.usage.current(workspaceId, nowMs);
    if (totals instanceof Promise) return totals.then((t) => this.judge(plan, t));
    return this.judge(plan, totals);
  }

  /** What an applied (not replayed) write changed. */
  record(workspaceId: string, delta: StorageDelta): void {
    this.usage.record(workspaceId, storedBytesOf(delta), delta.players);
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

  private judge(plan: Plan, totals: StorageTotals): void {
    const quota = this.quotaBytes[plan];
    if (totals.bytes >= quota) {
      throw new AppError(
        ErrorCode.STORAGE_QUOTA_EXCEEDED,
        `The workspace stores ${totals.bytes} bytes, the ${plan} plan's quota is ${quota}: delete data, or move to a larger plan`,
      );
    }
  }
}
