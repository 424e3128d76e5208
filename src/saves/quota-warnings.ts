// Warnings before the storage quota's wall: at 80% and 95% of a workspace's quota (what the
// quota weighs, quotaBytesOf), a gauge per workspace (pds_storage_quota_used_ratio, only while
// at or over 80%), the workspace in the overview's list of workspaces near their quota, and a
// log line per crossing (up past 80%, up past 95%, back under either), written once across the
// fleet: the level logged last lives in Redis (store/workspaces/quota-levels.ts) and is swapped
// in one command, so only the instance that changes it logs. Fed with each total an instance
// learns from Redis (StorageUsage's flushes and reads, every STORAGE_FLUSH_MS at most), never
// per write; Redis is called only when this instance sees a workspace's level change.
import type { Config } from '../config.js';
import type { Plan } from '../domain/types.js';
import type { Logger } from '../logger.js';
import { metrics } from '../metrics.js';
import type { RedisClient } from '../store/redis/redis.js';
import { swapQuotaLevel } from '../store/workspaces/quota-levels.js';
import type { StorageTotals } from '../store/workspaces/storage-usage.js';
import { quotaBytesOf } from './storage-quota.js';

/** The warning levels, in percent of the quota. */
export const QUOTA_WARNING_LEVELS = [80, 95] as const;

/** Used over quota in percent, one decimal (a quota of 0 with anything used: 100). */
export function percentOfQuota(used: number, quota: number): number {
  if (quota <= 0) return used > 0 ? 100 : 0;
  return Math.round((used / quota) * 1000) / 10;
}

/** The highest warning level a share of the quota (used / quota) has reached, 0 under all. */
export function quotaLevelOf(share: number): number {
  let level = 0;
  for (const at of QUOTA_WARNING_LEVELS) if (share * 100 >= at) level = at;
  return level;
}

export class QuotaWarnings {
  /** The level this instance last saw per workspace (undefined: never seen). */
  private readonly levels = new Map<string, number>();
  private readonly plans = new Map<string, Plan>();
  /** Swaps in flight, so a chain of totals is judged in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly redis: RedisClient,
    private readonly quotaBytes: Config['storage']['quotaBytes'],
    private readonly logger?: Logger,
  ) {}

  /** The workspace's plan, as its last request said (a plan change applies from the next total). */
  notePlan(workspaceId: string, plan: Plan): void {
    if (this.plans.get(workspaceId) !== plan) this.plans.set(workspaceId, plan);
  }

  /** A total this instance learned from Redis. */
  observe(workspaceId: string, totals: StorageTotals): void {
    const plan = this.plans.get(workspaceId);
    if (plan === undefined) return;
    const quota = this.quotaBytes[plan];
    const used = quotaBytesOf(totals);
    const share = quota > 0 ? used / quota : used > 0 ? Infinity : 0;
    const level = quotaLevelOf(share);
    if (level > 0) metrics.storageQuotaUsed.set({ workspace: workspaceId }, Math.round(share * 10_000) / 10_000);
    else metrics.storageQuotaUsed.remove({ workspace: workspaceId });
    const seen = this.levels.get(workspaceId);
    if (seen === level) return;
    this.levels.set(workspaceId, level);
    // Under every level and never seen over one: nothing to undo, no Redis call.
    if (seen === undefined && level === 0) return;
    this.chain = this.chain
      .then(async () => {
        const before = await swapQuotaLevel(this.redis, workspaceId, level, share);
        if (before === level) return;
        const line = { workspaceId, plan, usedBytes: used, quotaBytes: quota, percent: Math.round(share * 1000) / 10, quotaLevel: level, quotaLevelBefore: before };
        if (level > before) this.logger?.warn(line, `storage quota: workspace ${workspaceId} passed ${level}% of its quota`);
        else this.logger?.info(line, `storage quota: workspace ${workspaceId} is back under ${QUOTA_WARNING_LEVELS.find((at) => at > level)}% of its quota`);
      })
      .catch((err: unknown) => {
        // Tried again when the level next changes; the gauge is already right.
        this.levels.delete(workspaceId);
        this.logger?.warn({ err, workspaceId }, 'storage quota: could not record a warning level');
      });
  }

  /** Waits for the swaps in flight (tests, shutdown). */
  settled(): Promise<void> {
    return this.chain;
  }

  /** Forgets a workspace (deleted): its gauge series goes. */
  forget(workspaceId: string): void {
    this.levels.delete(workspaceId);
    this.plans.delete(workspaceId);
    metrics.storageQuotaUsed.remove({ workspace: workspaceId });
  }
}
