// Counters of the gate's decisions, by reason, kept in process so the request path never waits
// on them. `snapshot()` is what a metrics exporter reads (wired into /metrics at merge).

/** Why a request failed the gate's checks. */
export type ViolationReason = 'user-agent' | 'roblox-id' | 'address' | 'address-unknown' | 'editor-production-key';
/** Why a request was answered 403 by the gate. */
export type RefusalReason = 'banned' | 'violation' | 'editor-production-key';

export const VIOLATION_REASONS: readonly ViolationReason[] = [
  'user-agent',
  'roblox-id',
  'address',
  'address-unknown',
  'editor-production-key',
];
export const REFUSAL_REASONS: readonly RefusalReason[] = ['banned', 'violation', 'editor-production-key'];

export interface GateStatsSnapshot {
  /** Requests with at least one violation of this reason (a request may count under several). */
  readonly violations: Readonly<Record<ViolationReason, number>>;
  readonly refusals: Readonly<Record<RefusalReason, number>>;
  /** Bans this instance created automatically. */
  readonly bansCreated: number;
  /** Enforce-mode violations refused without a ban: unknown, loopback, private or platform addresses. */
  readonly refusedNotBanned: number;
  /** Editor play-test requests let through with a development key. */
  readonly editorDevPassed: number;
  /** Enforce-mode violations refused without a ban because GATE_BAN_MAX_PER_MINUTE was reached. */
  readonly bansRateLimited: number;
}

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
