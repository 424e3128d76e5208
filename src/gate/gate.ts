// Platform-only access: the middleware that runs before authentication on every public
// request. Order: allow-listed addresses pass; banned addresses get 403 before their key is
// looked up (so they never count against a workspace's limit); the editor's play-tests need a
// development key; any other request must pass every enabled check. A violation is logged and
// counted in `report` mode, and bans its address for good in `enforce` mode, except for
// addresses where a ban could hit the innocent (unknown, loopback, private, or inside the
// platform's own shared ranges), which are refused without a ban.
import { hostname } from 'node:os';
import type { Middleware, ParameterizedContext } from 'koa';
import { LRUCache } from 'lru-cache';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { GateConfig } from '../config.js';
import type { BanRecord, Evidence, ViolationOutcome } from '../domain/ban.js';
import { forbidden } from '../errors.js';
import type { AppState } from '../http/state.js';
import type { Logger } from '../logger.js';
import type { BanStore } from '../store/bans.js';
import type { EventSubscriber } from '../store/events.js';
import { CidrList } from './address.js';
import { BanList } from './ban-list.js';
import { failedChecks, isEditorRequest, notBannable, PLATFORM_ID_HEADER } from './checks.js';
import { resolveClientAddress, type ClientAddress, type ProxyTrust } from './client-address.js';
import { GateStats, type GateStatsSnapshot, type ViolationReason } from './stats.js';

/** A flood of violations from one address writes one record a minute, not one per request. */
const RECORD_INTERVAL_MS = 60_000;
const RECORD_TRACKED_ADDRESSES = 10_000;
const EVIDENCE_HEADERS = ['user-agent', 'roblox-id', 'x-forwarded-for', 'forwarded', 'via', 'x-real-ip', 'host', 'origin'];
const EVIDENCE_VALUE_MAX = 200;
const EVIDENCE_NAMES_MAX = 50;

const REASON_TEXT: Record<ViolationReason, string> = {
  'user-agent': 'the User-Agent is not the platform\'s',
  'roblox-id': 'the Roblox-Id header is missing',
  address: 'the address is outside the platform\'s ranges',
  'address-unknown': 'the client address cannot be determined',
  'editor-production-key': 'an editor play-test used a production key',
};

type Ctx = ParameterizedContext<AppState>;

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

  constructor(private readonly deps: GateDeps) {
    const { config } = deps;
    this.clock = deps.clock ?? Date.now;
    this.bans = new BanList(deps.store, deps.events, deps.logger, config.banReloadMs, this.clock);
    this.allowedRanges = CidrList.of(config.allowedCidrs);
    if (config.trustedProxyCidrs.length > 0) this.trust = { kind: 'cidrs', proxies: CidrList.of(config.trustedProxyCidrs) };
    else if (config.trustProxyHops > 0) this.trust = { kind: 'hops', hops: config.trustProxyHops };
    else this.trust = { kind: 'none' };
  }

  get mode() {
    return this.deps.config.mode;
  }

  /** Counters by reason, for metrics. */
  get counters(): GateStatsSnapshot {
    return this.stats.snapshot();
  }

  /** Loads the ban list (mode off: nothing to load). Throws when Redis cannot be read. */
  async start(): Promise<void> {
    if (this.mode !== 'off') await this.bans.start();
  }

  /** Stops the reload timer and waits for violation records still being written. */
  async stop(): Promise<void> {
    this.bans.stop();
    await Promise.all([...this.pending]);
  }

  clientAddress(ctx: Ctx): ClientAddress {
    return resolveClientAddress(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'], this.trust);
  }

  middleware(): Middleware<AppState> {
    // Not async itself: with the gate off (the default) a request passes with no promise of
    // its own.
    return (ctx, next) => (this.mode === 'off' ? next() : this.check(ctx, next));
  }

  /** The gate's checks for one request, when it is on (report or enforce). */
  private async check(ctx: Ctx, next: () => Promise<unknown>): Promise<unknown> {
    const address = this.clientAddress(ctx);
    if (address.known) {
      if (this.bans.isAllowListed(address.ip)) return next();
      if (this.bans.isBanned(address.text)) {
        this.stats.refusal('banned');
        throw forbidden(bannedMessage(address.text));
      }
    }
    const userAgent = ctx.get('user-agent');
    if (isEditorRequest(userAgent)) return this.editorPlayTest(ctx, next, address);

    const reasons = failedChecks({ userAgent, robloxId: ctx.get(PLATFORM_ID_HEADER), address }, this.deps.config, this.allowedRanges);
    if (reasons.length === 0) return next();
    this.stats.violation(reasons);
    if (this.mode === 'report') {
      this.record(ctx, address, reasons, 'reported', notBannable(address, this.allowedRanges));
      return next();
    }
    const why = notBannable(address, this.allowedRanges);
    if (why !== undefined || !address.known) {
      this.stats.refusal('violation');
      this.stats.notBanned();
      this.record(ctx, address, reasons, 'refused', why);
      throw forbidden(`Access denied: this API may only be called from the game platform's servers (${describe(reasons)})`);
    }
    if (!(await this.ban(ctx, address, reasons))) return next();
    this.stats.refusal('violation');
    throw forbidden(bannedMessage(address.text));
  }

  /**
   * The editor's user agent is easy to forge, so it opens only development keys. With any
   * other key the developer is told so and nobody is banned; report mode lets it through.
   */
  private async editorPlayTest(ctx: Ctx, next: () => Promise<unknown>, address: ClientAddress): Promise<unknown> {
    const principal = await this.deps.authenticator.authenticate(ctx.get('x-api-key') || undefined, ctx.state.startedAt);
    if (principal.dev) {
      this.stats.editorPassed();
      return next();
    }
    const reasons: ViolationReason[] = ['editor-production-key'];
    this.stats.violation(reasons);
    if (this.mode === 'report') {
      this.record(ctx, address, reasons, 'reported', 'editor play-tests are never banned', principal);
      return next();
    }
    this.stats.refusal('editor-production-key');
    this.record(ctx, address, reasons, 'refused', 'editor play-tests are never banned', principal);
    throw forbidden(
      'Play-tests from the editor (RobloxStudio) must use a development API key, and this is a production key: ' +
        'ask the service operator to mark a key of your workspace as a development key, and use that one in the editor',
    );
  }

  /**
   * Bans the address, unless Redis says it was allow-listed a moment ago (the event has not
   * arrived yet): the one extra round trip is paid once per banned address, never per request.
   * Returns whether it banned.
   */
  private async ban(ctx: Ctx, client: ClientAddress & { known: true }, reasons: readonly ViolationReason[]): Promise<boolean> {
    const address = client.text;
    // Applied here first, so that this instance refuses the address's next request at once.
    this.bans.addLocal(address);
    const allowed = await this.deps.store.allowedEntries().then(
      (entries) => CidrList.of(entries).contains(client.ip),
      () => false,
    );
    if (allowed) {
      this.bans.dropLocal(address);
      void this.bans.reload();
      return false;
    }
    const evidence = await this.evidence(ctx);
    const record: BanRecord = {
      address,
      bannedAt: new Date(this.clock()).toISOString(),
      source: 'gate',
      reasons,
      evidence,
    };
    this.deps.logger.warn({ address, reasons, evidence }, 'banned an address that called from outside the platform');
    try {
      if (await this.deps.store.add(record)) this.stats.banCreated();
      this.recentlyRecorded.set(address, true);
      await this.deps.store.recordViolation({ at: record.bannedAt, address, reasons, mode: this.mode, outcome: 'banned', evidence });
    } catch (err) {
      // The ban holds on this instance until the next reload drops it; the address's next
      // violation after that bans and stores it again.
      this.deps.logger.error({ err: (err as Error).message, address }, 'could not store a ban');
    }
    return true;
  }

  /** Logs and stores a violation that did not ban, at most once a minute per address. */
  private record(
    ctx: Ctx,
    address: ClientAddress,
    reasons: readonly ViolationReason[],
    outcome: ViolationOutcome,
    notBanned: string | undefined,
    principal?: Principal,
  ): void {
    const slot = address.known ? address.text : 'unknown';
    if (this.recentlyRecorded.has(slot)) return;
    this.recentlyRecorded.set(slot, true);
    const at = new Date(this.clock()).toISOString();
    const write = (async () => {
      const evidence = await this.evidence(ctx, principal);
      const text = address.known ? address.text : undefined;
      this.deps.logger.warn({ address: text, reasons, outcome, notBanned, evidence }, 'platform-only access violation');
      await this.deps.store.recordViolation({ at, address: text, reasons, mode: this.mode, outcome, notBanned, evidence });
    })()
      .catch((err: unknown) => this.deps.logger.warn({ err: (err as Error).message }, 'could not store a violation'))
      .finally(() => this.pending.delete(write));
    this.pending.add(write);
  }

  /** What the request showed; its key is resolved (cached) only to name the workspace. */
  private async evidence(ctx: Ctx, known?: Principal): Promise<Evidence> {
    let principal = known;
    if (!principal) {
      try {
        principal = await this.deps.authenticator.authenticate(ctx.get('x-api-key') || undefined, ctx.state.startedAt);
      } catch {
        principal = undefined;
      }
    }
    const headers: Record<string, string> = {};
    for (const name of EVIDENCE_HEADERS) {
      const value = ctx.get(name);
      if (value) headers[name] = value.slice(0, EVIDENCE_VALUE_MAX);
    }
    return {
      method: ctx.method,
      path: ctx.path.slice(0, EVIDENCE_VALUE_MAX),
      userAgent: ctx.get('user-agent').slice(0, EVIDENCE_VALUE_MAX) || undefined,
      robloxId: ctx.get(PLATFORM_ID_HEADER).slice(0, EVIDENCE_VALUE_MAX) || undefined,
      headerNames: Object.keys(ctx.req.headers).sort().slice(0, EVIDENCE_NAMES_MAX),
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
