// The gate's checks, as pure functions of what a request shows: which enabled checks fail,
// and whether the request comes from the platform's editor (a developer's play-test).
import type { GateConfig } from '../config.js';
import type { CidrList } from '../domain/address.js';
import type { ClientAddress } from './client-address.js';
import type { ViolationReason } from './stats.js';

/** The platform's game servers send this user agent; game code cannot change it. */
export const PLATFORM_USER_AGENT_PREFIX = 'Roblox/';
/** The platform's editor, when a developer play-tests from their own machine. */
export const EDITOR_USER_AGENT_PREFIX = 'RobloxStudio/';
export const PLATFORM_ID_HEADER = 'roblox-id';

export interface RequestFacts {
  readonly userAgent: string;
  readonly robloxId: string;
  readonly address: ClientAddress;
}

export function isEditorRequest(userAgent: string): boolean {
  return userAgent.startsWith(EDITOR_USER_AGENT_PREFIX);
}

/** Every enabled check that fails, in a fixed order; empty when the request passes. */
export function failedChecks(
  facts: RequestFacts,
  config: Pick<GateConfig, 'checkUserAgent' | 'checkRobloxId'>,
  allowed: CidrList,
): ViolationReason[] {
  const reasons: ViolationReason[] = [];
  if (config.checkUserAgent && !facts.userAgent.startsWith(PLATFORM_USER_AGENT_PREFIX)) reasons.push('user-agent');
  if (config.checkRobloxId && facts.robloxId.trim() === '') reasons.push('roblox-id');
  if (allowed.size > 0) {
    if (!facts.address.known) reasons.push('address-unknown');
    else if (!allowed.contains(facts.address.ip)) reasons.push('address');
  }
  return reasons;
}

const NEVER_AUTO_BANNED = new Set(['loopback', 'private', 'linkLocal', 'uniqueLocal', 'carrierGradeNat', 'unspecified']);

/**
 * Why an address must not be banned automatically, or undefined.
 * - Loopback and private addresses are the operator's own proxies or hosts far more often than
 *   an outside caller: banning one (say, behind a proxy with TRUST_PROXY_HOPS unset) would
 *   lock out every caller at once.
 * - Addresses in the platform's ranges are shared by every game server behind them: a header
 *   check failing there (the platform changed its User-Agent?) must not ban them all for good.
 */
export function notBannable(address: ClientAddress, platformRanges: CidrList): string | undefined {
  if (!address.known) return `the client address is unknown (${address.why})`;
  if (platformRanges.contains(address.ip)) {
    return `${address.text} is in GATE_ALLOWED_CIDRS, the platform's own shared ranges: refused, never banned automatically`;
  }
  const range = address.ip.range();
  if (NEVER_AUTO_BANNED.has(range)) {
    return `${address.text} is a ${range} address: a proxy or host of the operator's own, not banned automatically (is TRUST_PROXY_HOPS or TRUSTED_PROXY_CIDRS set?)`;
  }
  return undefined;
}
