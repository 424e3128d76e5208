// The ban list and allow-list as every instance holds them in memory, so that checking a
// request costs no Redis round trip.
//
// Staleness is bounded three ways:
// - a ban event (pub/sub, store/redis/events.ts) for one address re-reads that address at once
//   (one HEXISTS), so bans and lifts reach every instance within milliseconds;
// - an event without an address (allow-list changes) and every (re)subscription reload all;
// - a full reload runs every GATE_BAN_RELOAD_MS in any case, and every second while the
//   subscription is down, so a lost event is corrected within that bound.
// When Redis cannot be read, the last loaded lists keep applying: a Redis outage never lifts
// a ban, it only delays bans made elsewhere.
import type { Logger } from '../logger.js';
import type { BanStore } from '../store/installation/bans.js';
import type { CacheEvent, EventSubscriber } from '../store/redis/events.js';
import { banSubject, CidrList, type Ip } from '../domain/address.js';

const DOWN_RELOAD_MS = 1000;
const TICK_MS = 1000;
/** Loads restarted because events raced them, before the last snapshot is taken as it is. */
const MAX_LOAD_ATTEMPTS = 3;

export class BanList {
  private banned = new Set<string>();
  private allowed = new CidrList([]);
  /** Bumped by every change seen between loads; a load that saw it move is retried. */
  private epoch = 0;
  private lastLoadMs = 0;
  private loading: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private readonly onEvent = (event: CacheEvent) => this.handle(event);
  private readonly onReset = () => {
    if (this.events?.live) void this.reload();
  };

  constructor(
    private readonly store: BanStore,
    private readonly events: EventSubscriber | undefined,
    private readonly logger: Logger,
    private readonly reloadMs: number,
    private readonly clock: () => number = Date.now,
    /** `operator`: only bans an operator made apply (the gate is off: its own bans are set aside). */
    private readonly applies: 'all' | 'operator' = 'all',
  ) {}

  get size(): number {
    return this.banned.size;
  }

  /** Whether this exact subject (an address, or an IPv6 `network/64`) is banned. */
  isBanned(address: string): boolean {
    return this.banned.has(address);
  }

  /**
   * Whether a ban covers the address: its own subject (the /64 of an IPv6 address), or an
   * IPv6 address banned one by one before bans covered /64s.
   */
  covers(client: { readonly ip: Ip; readonly text: string }): boolean {
    if (this.banned.size === 0) return false;
    if (client.ip.kind() === 'ipv4') return this.banned.has(client.text);
    return this.banned.has(banSubject(client.ip)) || this.banned.has(client.text);
  }

  isAllowListed(ip: Ip): boolean {
    return this.allowed.contains(ip);
  }

  /** Applies a ban made here before it is stored, so this instance refuses at once (a reload drops it if it was not stored). */
  addLocal(address: string): void {
    this.epoch++;
    this.banned.add(address);
  }

  /** Undoes `addLocal` for an address that turned out to be allow-listed. */
  dropLocal(address: string): void {
    this.epoch++;
    this.banned.delete(address);
  }

  /** Loads both lists (throws when Redis cannot be read), subscribes, and starts the timer. */
  async start(): Promise<void> {
    this.events?.on('event', this.onEvent);
    this.events?.on('reset', this.onReset);
    await this.load();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.events?.off('event', this.onEvent);
    this.events?.off('reset', this.onReset);
  }

  private tick(): void {
    const since = this.clock() - this.lastLoadMs;
    const live = this.events?.live ?? false;
    if (since >= this.reloadMs || (!live && since >= DOWN_RELOAD_MS)) void this.reload();
  }

  /** A full reload that logs instead of throwing (timers and events). */
  reload(): Promise<void> {
    this.loading ??= this.load()
      .then(
        () => {
          if (this.failing) this.logger.info({ bans: this.banned.size }, 'ban list reloaded after failures');
          this.failing = false;
        },
        (err: unknown) => {
          if (!this.failing) {
            this.logger.warn({ err: (err as Error).message }, 'cannot reload the ban list; the last one loaded keeps applying');
          }
          this.failing = true;
        },
      )
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }

  private async load(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const epoch = this.epoch;
      const snapshot = this.applies === 'operator' ? await this.store.operatorSnapshot() : await this.store.snapshot();
      if (epoch !== this.epoch && attempt < MAX_LOAD_ATTEMPTS) continue;
      this.banned = new Set(snapshot.banned);
      this.allowed = CidrList.of(snapshot.allowed);
      this.lastLoadMs = this.clock();
      return;
    }
  }

  private handle(event: CacheEvent): void {
    if (event.type !== 'ban') return;
    this.epoch++;
    if (event.address === undefined) {
      void this.reload();
      return;
    }
    const address = event.address;
    const banned = this.applies === 'operator' ? this.store.get(address).then((r) => r?.source === 'operator') : this.store.isBanned(address);
    banned.then(
      (banned) => {
        this.epoch++;
        if (banned) this.banned.add(address);
        else this.banned.delete(address);
      },
      // The periodic reload corrects this address within GATE_BAN_RELOAD_MS.
      (err: unknown) => this.logger.warn({ err: (err as Error).message, address }, 'cannot re-read a ban'),
    );
  }
}
