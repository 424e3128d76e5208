// Platform-only access: the checks that run before authentication on every public request
// (http/middleware/gate.ts runs them from Koa). Order: allow-listed addresses pass; banned addresses get 403 before their key is
// looked up (so they never count against a workspace's limit); the editor's play-tests need a
// development key; any other request must pass every enabled check. A violation is logged and
// counted in `report` mode, and bans its address for good in `enforce` mode, except for
// addresses where a ban could hit the innocent (unknown, loopback, private, or inside the
// platform's own shared ranges), which are refused without a ban.
import { hostname } from 'node:os';
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { GateConfig } from '../config.js';
import type { BanRecord, Evidence, ViolationOutcome } from '../domain/ban.js';
import { apiKeyOf, redactApiKeys } from '../domain/api-key.js';
import { AppError, forbidden } from '../errors.js';
import type { Logger } from '../logger.js';
import type { BanStore } from '../store/installation/bans.js';
import type { EventSubscriber } from '../store/redis/events.js';
import { banNetwork, banSubject, CidrList } from '../domain/address.js';
import { escapeControlCharacters } from '../domain/value.js';
import { BanList } from './ban-list.js';
import { failedChecks, isEditorRequest, notBannable, PLATFORM_ID_HEADER } from './checks.js';
import { callerKey, proxyTrustOf, resolveClientAddress, type ClientAddress, type ProxyTrust } from './client-address.js';
import { LogSampler } from './log-sampler.js';
import { GateStats, type GateStatsSnapshot, type ViolationReason } from './stats.js';

/** A flood of violations from one address writes one record a minute, not one per request. */
const RECORD_INTERVAL_MS = 60_000;
/**
 * The part of a minute's automatic bans (GATE_BAN_MAX_PER_MINUTE) one network (an IPv4 /24, an
 * IPv6 /48) may take, at least one: so that one network rotating its addresses cannot use up
 * every ban of the minute and leave the violators of every other network unbanned.
 */
export const NETWORK_BAN_SHARE = 0.25;
/** Networks whose share of the minute is known to be spent: no Redis call for them until it ends. */
const FULL_NETWORKS_TRACKED = 10_000;
const RECORD_TRACKED_ADDRESSES = 10_000;
const EVIDENCE_HEADERS = ['user-agent', 'roblox-id', 'x-forwarded-for', 'forwarded', 'via', 'x-real-ip', 'host', 'origin'];
// Evidence is bounded whatever the request holds: 8 header values, the path, user agent and
// Roblox-Id of 200 characters each, and 32 header names of 40: about 3.5 KB of JSON at most
// (test/http/gate-abuse.test.ts pins 4 KiB), where issue 17 saw 14 KB a record.
const EVIDENCE_VALUE_MAX = 200;
const EVIDENCE_NAMES_MAX = 32;
const EVIDENCE_NAME_CHARS = 40;

const REASON_TEXT: Record<ViolationReason, string> = {
  'user-agent': 'the User-Agent is not the platform\'s',
  'roblox-id': 'the Roblox-Id header is missing',
  address: 'the address is outside the platform\'s ranges',
  'address-unknown': 'the client address cannot be determined',
  'editor-production-key': 'an editor play-test used a production key',
};

/**
 * What the gate reads of a request: no framework's context, so the policy is tested and reused
 * without Koa (http/middleware/gate.ts adapts Koa's context to it).
 */
export interface GateRequest {
  readonly method: string;
  readonly path: string;
  /** The socket's peer address. */
  readonly remoteAddress: string | undefined;
  readonly headers: IncomingHttpHeaders;
  /** When the request arrived (ms): the key lookups' clock. */
  readonly startedAt: number;
}

/**
 * Text a violator sent, as its evidence keeps it: control characters written out (a header value
 * may hold U+0080-U+00FF, bytes Node reads as latin1, and the CLI prints evidence to a terminal),
 * then cut to EVIDENCE_VALUE_MAX.
 */
function shown(text: string): string {
  return escapeControlCharacters(text.slice(0, EVIDENCE_VALUE_MAX)).slice(0, EVIDENCE_VALUE_MAX);
}

/** A header's value as one string ('' when absent), as Koa's ctx.get gives the ones read here. */
function header(request: GateRequest, name: string): string {
  const value = request.headers[name];
  return typeof value === 'string' ? value : Array.isArray(value) ? value.join(', ') : '';
}

export interface GateDeps {
  readonly config: GateConfig;
  readonly logger: Logger;
  readonly authenticator: Authenticator;
  readonly store: BanStore;
  readonly events: EventSubscriber | undefined;
  readonly clock?: () => number;
}

export class Gate {
  private readonly stats = new GateStats();
  readonly bans: BanList;
  private readonly allowedRanges: CidrList;
  private readonly trust: ProxyTrust;
  private readonly recentlyRecorded = new LRUCache<string, true>({ max: RECORD_TRACKED_ADDRESSES, ttl: RECORD_INTERVAL_MS });
  private readonly clock: () => number;
  private readonly instance = hostname();
  /** Violation records still being written; `stop()` lets them finish before Redis closes. */
  private readonly pending = new Set<Promise<void>>();
  private readonly logSampler: LogSampler;
  /** Set when the minute's automatic bans are used up: no Redis call until it has passed. */
  private bansFullUntil = 0;
  /** Network -> end of the minute in which it took its share of the automatic bans. */
  private readonly networksFull = new LRUCache<string, number>({ max: FULL_NETWORKS_TRACKED });

  constructor(private readonly deps: GateDeps) {
    const { config } = deps;
    this.clock = deps.clock ?? Date.now;
    // With the gate off, the operator's bans still apply; the gate's own (automatic) bans are set
    // aside, so `off` remains the switch that stops every refusal the gate decided by itself.
    this.bans = new BanList(deps.store, deps.events, deps.logger, config.banReloadMs, this.clock, config.mode === 'off' ? 'operator' : 'all');
    this.allowedRanges = CidrList.of(config.allowedCidrs);
    this.trust = proxyTrustOf(config);
    this.logSampler = new LogSampler(deps.logger, config.violationLogPerMinute, this.clock);
  }

  get mode() {
    return this.deps.config.mode;
  }

  /** Counters by reason, for metrics. */
  get counters(): GateStatsSnapshot {
    return this.stats.snapshot();
  }

  /** Loads the ban list (in every mode: an operator's ban is a ban). Throws when Redis cannot be read. */
  async start(): Promise<void> {
    await this.bans.start();
  }

  /** Nothing to check: the gate is off and no ban applies, so a request passes untouched. */
  get idle(): boolean {
    return this.mode === 'off' && this.bans.size === 0;
  }

  /** Stops the reload timer and waits for violation records still being written. */
  async stop(): Promise<void> {
    this.bans.stop();
    await Promise.all([...this.pending]);
  }

  clientAddress(request: Pick<GateRequest, 'remoteAddress' | 'headers'>): ClientAddress {
    return resolveClientAddress(request.remoteAddress, request.headers['x-forwarded-for'], this.trust);
  }

  /**
   * The gate for one request: bans in every mode, then (report or enforce) the checks. Resolves
   * when the request may go on, with the principal of its key when the checks had to look the
   * key up (an editor play-test's development key), so that authentication does not look it up
   * again; throws the 403 (an AppError) when it may not.
   */
  async admit(request: GateRequest): Promise<Principal | undefined> {
    const address = this.clientAddress(request);
    if (address.known) {
      if (this.bans.isAllowListed(address.ip)) return;
      if (this.bans.covers(address)) {
        this.stats.refusal('banned');
        throw forbidden(bannedMessage(banSubject(address.ip)));
      }
    }
    if (this.mode === 'off') return;
    const userAgent = header(request, 'user-agent');
    if (isEditorRequest(userAgent)) return this.editorPlayTest(request, address);

    const reasons = failedChecks({ userAgent, robloxId: header(request, PLATFORM_ID_HEADER), address }, this.deps.config, this.allowedRanges);
    if (reasons.length === 0) return;
    this.stats.violation(reasons);
    if (this.mode === 'report') {
      this.record(request, address, reasons, 'reported', notBannable(address, this.allowedRanges));
      return;
    }
    const why = notBannable(address, this.allowedRanges);
    if (why !== undefined || !address.known) {
      this.stats.refusal('violation');
      this.stats.notBanned();
      this.record(request, address, reasons, 'refused', why);
      throw forbidden(`Access denied: this API may only be called from the game platform's servers (${describe(reasons)})`);
    }
    const outcome = await this.ban(request, address, reasons);
    if (outcome === 'allowed') return;
    this.stats.refusal('violation');
    if (outcome === 'limited') {
      this.stats.banLimited();
      this.record(request, address, reasons, 'refused', "GATE_BAN_MAX_PER_MINUTE (or this network's share of it) reached: refused without a ban");
      throw forbidden(`Access denied: this API may only be called from the game platform's servers (${describe(reasons)})`);
    }
    throw forbidden(bannedMessage(banSubject(address.ip)));
  }

  /**
   * The editor's user agent is easy to forge, so it opens only development keys. Any other key
   * (production, unknown, revoked, none) gets one and the same 403, so the editor path cannot
   * tell a production key from a made-up one; its failed lookups count against the caller's
   * budget like any other (429 past it). Nobody is banned; report mode lets it through.
   */
  private async editorPlayTest(request: GateRequest, address: ClientAddress): Promise<Principal | undefined> {
    let principal: Principal | undefined;
    try {
      principal = await this.deps.authenticator.authenticate(apiKeyOf(request.headers), request.startedAt, () =>
        callerKey(address),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 401) throw err;
    }
    if (principal?.dev) {
      this.stats.editorPassed();
      return principal;
    }
    const reasons: ViolationReason[] = ['editor-production-key'];
    this.stats.violation(reasons);
    if (this.mode === 'report') {
      this.record(request, address, reasons, 'reported', 'editor play-tests are never banned', principal);
      return principal;
    }
    this.stats.refusal('editor-production-key');
    this.record(request, address, reasons, 'refused', 'editor play-tests are never banned', principal);
    throw forbidden(
      'Play-tests from the editor (RobloxStudio) must use a development API key, and this key is not one: ' +
        'ask the service operator to mark a key of your workspace as a development key, and use that one in the editor',
    );
  }

  /**
   * Bans the address (an IPv6 address by its /64), unless its network has taken its share of
   * the minute's automatic bans or the minute's bans are used up (`limited`), or Redis says it
   * was allow-listed a moment ago (`allowed`: the event has not arrived yet). The extra round
   * trips are paid once per banned subject, never per request.
   */
  private async ban(
    request: GateRequest,
    client: ClientAddress & { known: true },
    reasons: readonly ViolationReason[],
  ): Promise<'banned' | 'allowed' | 'limited'> {
    const address = banSubject(client.ip);
    const network = banNetwork(client.ip);
    const now = this.clock();
    if (now < this.bansFullUntil || now < (this.networksFull.get(network) ?? 0)) return 'limited';
    // Applied here first, so that this instance refuses the subject's next request at once
    // (and a burst from one /64 takes one slot of the minute, not one each).
    this.bans.addLocal(address);
    const minuteEnd = (Math.floor(now / 60_000) + 1) * 60_000;
    const max = this.deps.config.banMaxPerMinute;
    // The network's share first: past it, the network takes nothing from the minute's budget.
    const share = Math.max(1, Math.floor(max * NETWORK_BAN_SHARE));
    const takenByNetwork = await this.deps.store.takeNetworkBanSlot(now, network).catch(() => Infinity);
    if (takenByNetwork > share) {
      if (takenByNetwork !== Infinity) this.networksFull.set(network, minuteEnd);
      this.bans.dropLocal(address);
      return 'limited';
    }
    const taken = await this.deps.store.takeBanSlot(now).catch(() => Infinity);
    if (taken > max) {
      if (taken !== Infinity) this.bansFullUntil = minuteEnd;
      this.bans.dropLocal(address);
      return 'limited';
    }
    const allowed = await this.deps.store.allowedEntries().then(
      (entries) => CidrList.of(entries).contains(client.ip),
      () => false,
    );
    if (allowed) {
      this.bans.dropLocal(address);
      void this.bans.reload();
      return 'allowed';
    }
    const evidence = await this.evidence(request);
    const record: BanRecord = {
      address,
      bannedAt: new Date(this.clock()).toISOString(),
      source: 'gate',
      reasons,
      evidence,
    };
    if (this.logSampler.take()) {
      this.deps.logger.warn({ address, seen: client.text, reasons, evidence }, 'banned an address that called from outside the platform');
    }
    try {
      if (await this.deps.store.add(record)) this.stats.banCreated();
      this.recentlyRecorded.set(address, true);
      await this.deps.store.recordViolation({ at: record.bannedAt, address, reasons, mode: this.mode, outcome: 'banned', evidence });
    } catch (err) {
      // The ban holds on this instance until the next reload drops it; the address's next
      // violation after that bans and stores it again.
      this.deps.logger.error({ err: (err as Error).message, address }, 'could not store a ban');
    }
    return 'banned';
  }

  /** Logs and stores a violation that did not ban, at most once a minute per address. */
  private record(
    request: GateRequest,
    address: ClientAddress,
    reasons: readonly ViolationReason[],
    outcome: ViolationOutcome,
    notBanned: string | undefined,
    principal?: Principal,
  ): void {
    const slot = address.known ? banSubject(address.ip) : 'unknown';
    if (this.recentlyRecorded.has(slot)) return;
    this.recentlyRecorded.set(slot, true);
    const at = new Date(this.clock()).toISOString();
    const write = (async () => {
      const evidence = await this.evidence(request, principal);
      const text = address.known ? address.text : undefined;
      if (this.logSampler.take()) {
        this.deps.logger.warn({ address: text, reasons, outcome, notBanned, evidence }, 'platform-only access violation');
      }
      await this.deps.store.recordViolation({ at, address: text, reasons, mode: this.mode, outcome, notBanned, evidence });
    })()
      .catch((err: unknown) => this.deps.logger.warn({ err: (err as Error).message }, 'could not store a violation'))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** What the request showed; its key is resolved (cached) only to name the workspace. */
  private async evidence(request: GateRequest, known?: Principal): Promise<Evidence> {
    let principal = known;
    if (!principal) {
      try {
        principal = await this.deps.authenticator.authenticate(apiKeyOf(request.headers), request.startedAt);
      } catch {
        principal = undefined;
      }
    }
    const headers: Record<string, string> = {};
    for (const name of EVIDENCE_HEADERS) {
      const value = header(request, name);
      if (value) headers[name] = shown(value);
    }
    const allNames = Object.keys(request.headers);
    let cut = 0;
    const headerNames = allNames
      .sort()
      .slice(0, EVIDENCE_NAMES_MAX)
      .map((name) => {
        if (name.length <= EVIDENCE_NAME_CHARS) return name;
        cut++;
        return name.slice(0, EVIDENCE_NAME_CHARS);
      });
    return {
      method: request.method,
      path: shown(redactApiKeys(request.path)),
      userAgent: shown(header(request, 'user-agent')) || undefined,
      robloxId: shown(header(request, PLATFORM_ID_HEADER)) || undefined,
      headerNames,
      headerCount: allNames.length > headerNames.length ? allNames.length : undefined,
      headerNamesCut: cut > 0 ? cut : undefined,
      headers,
      workspaceId: principal?.workspace.id,
      keyId: principal?.keyId,
      instance: this.instance,
    };
  }
}

function describe(reasons: readonly ViolationReason[]): string {
  return reasons.map((r) => REASON_TEXT[r]).join('; ');
}

function bannedMessage(address: string): string {
  return (
    `Access denied: ${address} is banned for calling this API from outside the game platform's servers. ` +
    'Only the service operator can lift the ban: contact them if this is a mistake'
  );
}
