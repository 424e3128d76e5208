// Counters of the gate's decisions, by reason, kept in process so the request path never waits
// on them. `snapshot()` is what a metrics exporter reads (wired into /metrics at merge).

import {
  REFUSAL_REASONS,
  VIOLATION_REASONS,
  type GateStatsSnapshot,
  type RefusalReason,
  type ViolationReason,
} from '../domain/ban.js';

export { REFUSAL_REASONS, VIOLATION_REASONS };
export type { GateStatsSnapshot, RefusalReason, ViolationReason };

function zeros<K extends string>(names: readonly K[]): Record<K, number> {
  return Object.fromEntries(names.map((n) => [n, 0])) as Record<K, number>;
}

export class GateStats {
  private readonly violations = zeros(VIOLATION_REASONS);
  private readonly refusals = zeros(REFUSAL_REASONS);
  private bansCreated = 0;
  private refusedNotBanned = 0;
  private editorDevPassed = 0;
  private bansRateLimited = 0;

  violation(reasons: readonly ViolationReason[]): void {
    for (const reason of reasons) this.violations[reason]++;
  }

  refusal(reason: RefusalReason): void {
    this.refusals[reason]++;
  }

  banCreated(): void {
    this.bansCreated++;
  }

  notBanned(): void {
    this.refusedNotBanned++;
  }

  banLimited(): void {
    this.bansRateLimited++;
  }

  editorPassed(): void {
    this.editorDevPassed++;
  }

  snapshot(): GateStatsSnapshot {
    return {
      violations: { ...this.violations },
      refusals: { ...this.refusals },
      bansCreated: this.bansCreated,
      refusedNotBanned: this.refusedNotBanned,
      editorDevPassed: this.editorDevPassed,
      bansRateLimited: this.bansRateLimited,
    };
  }
}
