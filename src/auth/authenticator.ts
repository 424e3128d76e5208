// Turns an `x-api-key` header into a principal (key id, workspace, scope), caching the
// key -> record and workspace lookups in process so the hot path needs no Redis round trip.
//
// Revocation still applies at once on every instance: writers publish an invalidation
// (store/redis/events.ts) that drops the entry everywhere. The cache is only trusted while that
// subscription is live; a lookup that raced an invalidation is not cached (epoch check); and
// every entry also expires after KEY_CACHE_TTL_MS, the bound on staleness if an invalidation
// were ever lost. An entry past that time still stands in for its refresh when Redis cannot
// answer it (the record's master failing over), for at most as long again: no invalidation
// dropped it, and the key's requests go on instead of failing in authentication. When the
// subscription goes down or comes back, every entry is taken as past its time (invalidations
// may have been missed), not dropped. A creation event (a new key or workspace) drops only
// what a creation can make stale, the "no such key" entries: it may arrive after the new key's
// first lookup (pub/sub across a cluster's nodes is not ordered with the reads), and must not
// empty the cache under it.
//
// Made-up keys are kept apart from real ones: unknown key hashes live in their own, smaller
// cache, so a flood of them never evicts a real key (issue 17 saw a flood push real keys out,
// each then costing a Redis call). And each caller address (an IPv6 /64) gets a budget of
// failed lookups a minute: past it, a key this instance has not seen valid is answered 429 at
// once, with no Redis call, so guessing keys costs the guesser, not Redis. A missing or
// malformed key is no guess (it costs no lookup and can never match): it is answered 401 and
// not counted.
import { LRUCache } from 'lru-cache';
import { hashApiKey, looksLikeApiKey } from '../domain/api-key.js';
import type { ApiKeyRecord, KeyScope, Workspace } from '../domain/types.js';
import { AppError, ErrorCode, unauthorized } from '../errors.js';
import type { ApiKeyStore } from '../store/workspaces/api-keys.js';
import type { CacheEvent, EventSubscriber } from '../store/redis/events.js';
import type { WorkspaceStore } from '../store/workspaces/workspaces.js';

export interface Principal {
  readonly keyId: string;
  readonly scope: KeyScope;
  readonly workspace: Workspace;
  /** A development key: the platform's editor may use it for play-tests (src/gate/). */
  readonly dev: boolean;
}

/**
 * What the cache holds for a key hash: the record, or the fact that there is none. Entries
 * carry their own expiry, checked against the request's clock reading: lru-cache's TTL reads
 * the clock on every get, which showed in the CPU profile.
 */
interface KeyLookup extends Freshness {
  readonly record: ApiKeyRecord;
}

interface WorkspaceLookup extends Freshness {
  readonly workspace: Workspace;
}

interface Freshness {
  readonly expiresAt: number;
  /** Until when the entry stands in for a refresh Redis cannot answer: expiresAt + the TTL. */
  readonly staleUntil: number;
  /** A refresh failed and it stood in: until a refresh works, it answers at once (see current). */
  readonly standingIn?: true;
}

/** An entry standing in for a failed refresh is refreshed again (in the background) after this long. */
export const STALE_RETRY_MS = 1000;

export interface AuthenticatorOptions {
  readonly ttlMs: number;
  readonly maxEntries: number;
  /** Unknown keys remembered (apart from real ones); maxEntries when not given. */
  readonly maxUnknownEntries?: number;
  /** 401s per caller address per minute before 429; no budget when not given. */
  readonly failuresPerMinute?: number;
}

/** Who is asking, for the failure budget: evaluated only when a key fails or misses the cache. */
export type CallerOf = () => string;

const FAILURE_WINDOW_MS = 60_000;
/** Lookups in flight one address may have before it has failed (then the budget counts them). */
export const PENDING_LOOKUPS_MAX = 1024;
/** Addresses whose failures are counted at once; the oldest are forgotten beyond. */
const FAILURE_TRACKED_ADDRESSES = 100_000;

interface FailureWindow {
  start: number;
  count: number;
  /** Lookups of this address still waiting on Redis. */
  pending: number;
  /** Lookups waiting for one in flight to end, once the address has failed (see checkBudget). */
  readonly waiting: Array<() => void>;
}

/** The failure window a lookup in flight holds, released when it ends. */
interface Held {
  window: FailureWindow | undefined;
}

export interface CacheStats {
  hits: number;
  misses: number;
  /** Lookups Redis could not answer, answered by an entry past its time (see the header). */
  stale: number;
}

export class Authenticator {
  private readonly keyCache: LRUCache<string, KeyLookup>;
  private readonly workspaceCache: LRUCache<string, WorkspaceLookup>;
  /** Key hashes that are no key, with their expiry. */
  private readonly unknownCache: LRUCache<string, number>;
  private readonly failures = new LRUCache<string, FailureWindow>({ max: FAILURE_TRACKED_ADDRESSES });
  private readonly failuresPerMinute: number | undefined;
  /** Bumped by every invalidation that drops entries; a lookup that saw it change is not cached. */
  private epoch = 0;
  /** Bumped by every creation event too; a lookup that saw it change does not cache "no such key". */
  private creations = 0;
  readonly stats: CacheStats & { failureLimited: number } = { hits: 0, misses: 0, stale: 0, failureLimited: 0 };

  constructor(
    private readonly apiKeys: ApiKeyStore,
    private readonly workspaces: WorkspaceStore,
    private readonly events: EventSubscriber | undefined,
    options: AuthenticatorOptions,
  ) {
    const ttl = Math.max(1, options.ttlMs);
    this.keyCache = new LRUCache({ max: options.maxEntries });
    this.workspaceCache = new LRUCache({ max: options.maxEntries });
    this.unknownCache = new LRUCache({ max: options.maxUnknownEntries ?? options.maxEntries });
    this.failuresPerMinute = options.failuresPerMinute;
    this.cachingEnabled = options.ttlMs > 0;
    this.ttlMs = ttl;
    events?.on('event', (event) => this.invalidate(event));
    events?.on('reset', () => this.distrust());
  }

  private readonly cachingEnabled: boolean;
  private readonly ttlMs: number;

  /**
   * Each entry lives between 80% and 100% of KEY_CACHE_TTL_MS: entries cached together (at
   * start-up, after a pub/sub reset) would otherwise all expire in the same instant, and every
   * key would need its Redis lookups at once.
   */
  private freshness(nowMs: number): Freshness {
    const expiresAt = nowMs + Math.max(1, Math.round(this.ttlMs * (0.8 + Math.random() * 0.2)));
    return { expiresAt, staleUntil: expiresAt + this.ttlMs };
  }

  private get cacheUsable(): boolean {
    return this.cachingEnabled && this.events !== undefined && this.events.live;
  }

  invalidate(event: CacheEvent): void {
    // A lookup in flight may have read "no such key" before a creation: not cached then.
    this.creations++;
    if (event.type !== 'ban' && event.created === true) {
      if (event.type === 'key') this.unknownCache.delete(event.keyHash);
      return;
    }
    this.epoch++;
    if (event.type === 'key') {
      this.keyCache.delete(event.keyHash);
      this.unknownCache.delete(event.keyHash);
    }
    else if (event.type === 'workspace') this.workspaceCache.delete(event.workspaceId);
  }

  /**
   * The subscription went down or came back: invalidations may have been missed, so no entry is
   * trusted before it is read again. Each stays, as one past its time, to stand in while Redis
   * cannot answer its refresh (within its staleUntil): an instance whose subscription was on a
   * master that failed would otherwise send every lookup to Redis at once, and each workspace
   * with a record on that master would fail for the whole failover. "No such key" entries go.
   */
  distrust(): void {
    this.epoch++;
    this.unknownCache.clear();
    expireAll(this.keyCache);
    expireAll(this.workspaceCache);
  }

  /**
   * Resolves the raw key to a principal, or throws 401. Never logs or keeps the raw key.
   * Synchronous when both the key and its workspace are cached (the common case): no promise,
   * no microtask. A promise when either must be read from Redis.
   */
  authenticate(rawKey: string | undefined, nowMs: number, caller?: CallerOf): Principal | Promise<Principal> {
    // Refused before any lookup, and not counted against the address: no Redis work, no guess.
    if (!rawKey) throw unauthorized('Missing API key: send it in the x-api-key header');
    if (!looksLikeApiKey(rawKey)) throw unauthorized('Invalid API key');
    const keyHash = hashApiKey(rawKey);
    if (caller === undefined || this.failuresPerMinute === undefined) return this.resolve(keyHash, nowMs);
    const held: Held = { window: undefined };
    let found: Principal | Promise<Principal>;
    try {
      found = this.resolve(keyHash, nowMs, caller, held);
    } catch (err) {
      this.noteFailure(err, caller, nowMs);
      throw err;
    }
    if (!(found instanceof Promise)) return found;
    // Released and counted in one step, so no other request sees the lookup in neither.
    return found.then(
      (principal) => {
        if (held.window) this.release(held.window, nowMs);
        return principal;
      },
      (err: unknown) => {
        this.noteFailure(err, caller, nowMs);
        if (held.window) this.release(held.window, nowMs);
        throw err;
      },
    );
  }

  private resolve(keyHash: string, nowMs: number, caller?: CallerOf, held?: Held): Principal | Promise<Principal> {
    let known = false;
    if (this.cacheUsable) {
      const cachedKey = this.keyCache.get(keyHash);
      if (cachedKey !== undefined && (cachedKey.expiresAt > nowMs || this.current(this.keyCache, keyHash, cachedKey, () => this.lookupKey(keyHash, nowMs)))) {
        this.stats.hits++;
        const record = admit(cachedKey.record, nowMs);
        const id = record.workspaceId;
        const cachedWorkspace = this.workspaceCache.get(id);
        if (cachedWorkspace !== undefined && (cachedWorkspace.expiresAt > nowMs || this.current(this.workspaceCache, id, cachedWorkspace, () => this.readWorkspace(id, nowMs)))) {
          return principalOf(record, cachedWorkspace.workspace);
        }
        return this.withWorkspace(record, nowMs);
      }
      // Its entry expired: a key this instance has seen active is no guess, and its refresh is
      // not held to the address's budget (a key seen revoked or expired is).
      known = cachedKey?.record.status === 'active';
      const unknownUntil = this.unknownCache.get(keyHash);
      if (unknownUntil !== undefined && unknownUntil > nowMs) {
        this.stats.hits++;
        throw unauthorized('Invalid API key');
      }
    }
    const lookup = () => this.lookupKey(keyHash, nowMs).then((record) => this.withWorkspace(admit(record, nowMs), nowMs));
    if (known || caller === undefined || held === undefined) return lookup();
    const window = this.windowOf(caller(), nowMs);
    const admitted = this.checkBudget(window, nowMs);
    // A lookup in flight counts against the budget until it is known to have failed or not,
    // so concurrent guesses cannot overrun it.
    const counted = () => {
      held.window = window;
      window.pending++;
      return lookup();
    };
    return admitted === undefined ? counted() : admitted.then(counted);
  }

  private windowOf(address: string, nowMs: number): FailureWindow {
    const window = this.failures.get(address);
    if (window === undefined) {
      const fresh: FailureWindow = { start: nowMs, count: 0, pending: 0, waiting: [] };
      this.failures.set(address, fresh);
      return fresh;
    }
    // Renewed in place: lookups in flight hold this object and release it when they end.
    if (nowMs - window.start >= FAILURE_WINDOW_MS) {
      window.start = nowMs;
      window.count = 0;
    }
    return window;
  }

  /**
   * Whether a lookup from this window's address may start now: undefined when it may, a promise
   * that resolves when it may, or 429 thrown. An address that has not failed this minute is
   * never held back however many lookups it has in flight (a proxy, or an instance with a cold
   * cache, sends many real keys from one address at once), up to PENDING_LOOKUPS_MAX. Once it
   * has failed, its lookups in flight count as failures to be, so concurrent guesses cannot run
   * past the budget: a lookup that would waits for one in flight to end rather than being
   * refused, since it may well be a real key (one misconfigured server behind a NAT must not
   * turn its neighbours' keys away). Only a spent budget, or more than PENDING_LOOKUPS_MAX
   * waiting, is 429.
   */
  private checkBudget(window: FailureWindow, nowMs: number): Promise<void> | undefined {
    const failed = this.failedIn(window, nowMs);
    if (failed >= this.failuresPerMinute!) throw this.budgetSpent(window, nowMs);
    if (failed === 0 ? window.pending < PENDING_LOOKUPS_MAX : failed + window.pending < this.failuresPerMinute!) return undefined;
    if (failed === 0 || window.waiting.length >= PENDING_LOOKUPS_MAX) throw this.budgetSpent(window, nowMs);
    return new Promise<void>((resolve) => window.waiting.push(resolve)).then(() => this.checkBudget(window, Date.now()));
  }

  /** A lookup ended: wakes the lookups waiting for a place (each checks the budget again). */
  private release(window: FailureWindow, nowMs: number): void {
    window.pending--;
    const failed = this.failedIn(window, nowMs);
    // Spent: every waiter wakes to its 429. Else as many as there are places.
    let places = failed >= this.failuresPerMinute! ? window.waiting.length : this.failuresPerMinute! - failed - window.pending;
    while (places-- > 0 && window.waiting.length > 0) window.waiting.shift()!();
  }

  private failedIn(window: FailureWindow, nowMs: number): number {
    return nowMs - window.start < FAILURE_WINDOW_MS ? window.count : 0;
  }

  private budgetSpent(window: FailureWindow, nowMs: number): AppError {
    this.stats.failureLimited++;
    const current = nowMs - window.start < FAILURE_WINDOW_MS;
    const retryAfter = current ? Math.max(1, Math.ceil((window.start + FAILURE_WINDOW_MS - nowMs) / 1000)) : 1;
    return new AppError(
      ErrorCode.RATE_LIMITED,
      `Too many requests with an invalid API key from this address (${this.failuresPerMinute} a minute): check the key, and retry in ${retryAfter} s`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  }

  private noteFailure(err: unknown, caller: CallerOf, nowMs: number): void {
    if (!(err instanceof AppError) || err.status !== 401) return;
    this.windowOf(caller(), nowMs).count++;
  }

  private async withWorkspace(record: ApiKeyRecord, nowMs: number): Promise<Principal> {
    const workspace = await this.lookupWorkspace(record.workspaceId, nowMs);
    if (!workspace) throw unauthorized('Invalid API key');
    return principalOf(record, workspace);
  }

  /** Reads the key's record from Redis, caching it (or its absence) while the cache is usable. */
  private async lookupKey(keyHash: string, nowMs: number): Promise<ApiKeyRecord | undefined> {
    const usable = this.cacheUsable;
    this.stats.misses++;
    const epoch = this.epoch;
    const creations = this.creations;
    let record: ApiKeyRecord | undefined;
    try {
      record = await this.apiKeys.findByHash(keyHash);
    } catch (err) {
      const standIn = this.standIn(this.keyCache, keyHash);
      if (standIn === undefined) throw err;
      return standIn.record;
    }
    // Gone: an entry left from before (past its time) must never stand in for it.
    if (record === undefined) this.keyCache.delete(keyHash);
    if (usable && epoch === this.epoch) {
      if (record === undefined) {
        if (creations === this.creations) this.unknownCache.set(keyHash, this.freshness(nowMs).expiresAt);
      }
      else this.keyCache.set(keyHash, { record, ...this.freshness(nowMs) });
    }
    return record;
  }

  private async lookupWorkspace(id: string, nowMs: number): Promise<Workspace | undefined> {
    if (this.cacheUsable) {
      const cached = this.workspaceCache.get(id);
      if (cached !== undefined && (cached.expiresAt > nowMs || this.current(this.workspaceCache, id, cached, () => this.readWorkspace(id, nowMs)))) {
        return cached.workspace;
      }
    }
    return this.readWorkspace(id, nowMs);
  }

  /** Reads the workspace from Redis, caching it while the cache is usable; an entry may stand in. */
  private async readWorkspace(id: string, nowMs: number): Promise<Workspace | undefined> {
    const usable = this.cacheUsable;
    const epoch = this.epoch;
    let workspace: Workspace | undefined;
    try {
      workspace = await this.workspaces.get(id);
    } catch (err) {
      const standIn = this.standIn(this.workspaceCache, id);
      if (standIn === undefined) throw err;
      return standIn.workspace;
    }
    if (workspace === undefined) this.workspaceCache.delete(id);
    else if (usable && epoch === this.epoch) this.workspaceCache.set(id, { workspace, ...this.freshness(nowMs) });
    return workspace;
  }

  /**
   * The entry past its time that answers for a refresh Redis could not answer, or undefined.
   * Read when the refresh failed, so one an invalidation dropped meanwhile is not used; only
   * while the subscription is live (else no invalidation would have dropped it). Kept fresh for
   * STALE_RETRY_MS, so the next requests answer at once and one refresh a second tries Redis.
   */
  private standIn<T extends Freshness>(cache: LRUCache<string, T>, id: string): T | undefined {
    const entry = cache.get(id);
    const now = Date.now();
    if (entry === undefined || !this.cacheUsable || now >= entry.staleUntil) return undefined;
    this.stats.stale++;
    standFor(cache, id, entry, now);
    return entry;
  }

  /**
   * Whether an entry past its time that is standing in (a refresh of it failed) answers now: it
   * does within its staleUntil, and starts the next refresh without waiting for it (one a
   * STALE_RETRY_MS), so that only the first request after Redis stopped answering waits on it.
   * A refresh that works replaces the entry; one that fails keeps it standing in.
   */
  private current<T extends Freshness>(cache: LRUCache<string, T>, id: string, entry: T, refresh: () => Promise<unknown>): boolean {
    const now = Date.now();
    if (entry.standingIn !== true || now >= entry.staleUntil) return false;
    standFor(cache, id, entry, now);
    refresh().catch(() => undefined);
    return true;
  }
}

/** Keeps an entry standing in, answered at once, for STALE_RETRY_MS more (never past its staleUntil). */
function standFor<T extends Freshness>(cache: LRUCache<string, T>, id: string, entry: T, now: number): void {
  cache.set(id, { ...entry, expiresAt: Math.min(entry.staleUntil, now + STALE_RETRY_MS), standingIn: true });
}

function expireAll<T extends Freshness>(cache: LRUCache<string, T>): void {
  // A copy first: setting an entry moves it in the cache's order.
  for (const [id, entry] of [...cache.entries()]) cache.set(id, { ...entry, expiresAt: 0 });
}

/** The key's record when it may be used now; 401 with the reason otherwise. */
function admit(record: ApiKeyRecord | undefined, nowMs: number): ApiKeyRecord {
  if (!record) throw unauthorized('Invalid API key');
  if (record.status !== 'active') throw unauthorized('API key has been revoked', ErrorCode.KEY_REVOKED);
  if (record.expiresAt && Date.parse(record.expiresAt) <= nowMs) throw unauthorized('API key has expired', ErrorCode.KEY_EXPIRED);
  return record;
}

function principalOf(record: ApiKeyRecord, workspace: Workspace): Principal {
  return { keyId: record.keyId, scope: record.scope, workspace, dev: record.dev === true };
}
