// The records of platform-only access: bans, allow-list entries and violations, as stored
// (JSON in Redis) and as shown to operators.
import type { GateMode } from './types.js';

/** What the request looked like: enough to judge a ban later, never an API key. */
export interface Evidence {
  readonly method: string;
  readonly path: string;
  readonly userAgent?: string | undefined;
  readonly robloxId?: string | undefined;
  /**
   * Names of the headers sent (values only for the few in `headers`), sorted: at most 32, each
   * cut to 40 characters, so a caller cannot grow a record by sending many long names.
   */
  readonly headerNames: readonly string[];
  /** How many headers the request had in all, when more than `headerNames` lists. */
  readonly headerCount?: number | undefined;
  /** How many of the listed names were cut to 40 characters. */
  readonly headerNamesCut?: number | undefined;
  /** Values of headers that tell where a request came from (forwarding, host, origin). */
  readonly headers: Readonly<Record<string, string>>;
  /** The workspace and key the request used, when its key was valid: who would be affected. */
  readonly workspaceId?: string | undefined;
  readonly keyId?: string | undefined;
  /** The instance that saw it. */
  readonly instance?: string | undefined;
}

export interface BanRecord {
  readonly address: string;
  readonly bannedAt: string;
  /** `gate`: banned automatically on a violation; `operator`: added by hand. */
  readonly source: 'gate' | 'operator';
  readonly reasons: readonly string[];
  readonly note?: string | undefined;
  readonly evidence?: Evidence | undefined;
}

export interface AllowEntry {
  /** An address or a range, canonical `network/bits`. */
  readonly entry: string;
  readonly addedAt: string;
  readonly note?: string | undefined;
}

export type ViolationOutcome = 'reported' | 'banned' | 'refused';

export interface ViolationRecord {
  readonly at: string;
  /** Canonical address, or undefined when it could not be determined. */
  readonly address?: string | undefined;
  readonly reasons: readonly ViolationReason[];
  readonly mode: GateMode;
  readonly outcome: ViolationOutcome;
  /** Why a violation did not lead to a ban (private address, unknown address). */
  readonly notBanned?: string | undefined;
  readonly evidence: Evidence;
}

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
  /** Enforce-mode violations refused without a ban because GATE_BAN_MAX_PER_MINUTE, or the network's share of it, was reached. */
  readonly bansRateLimited: number;
}
