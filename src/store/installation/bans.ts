// Bans, the allow-list and the recent-violations log in Redis: `pds:bans` (hash address ->
// JSON record), `pds:ban-allow` (hash entry -> JSON entry) and `pds:violations` (capped list,
// newest first). Writers publish a ban event so every instance's in-process list follows.
import type { AllowEntry, BanRecord, ViolationRecord } from '../../domain/ban.js';
import { publishEvent } from '../redis/events.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/** How many violations are kept: enough to review a rollout, bounded under a flood. */
export const VIOLATIONS_KEPT = 1000;
/** Bans kept in the recent-bans list (the overview shows the newest few still in force). */
export const RECENT_BANS_KEPT = 50;
/** The ban-rate counter outlives its minute, so a late increment still finds it. */
const BAN_RATE_TTL_S = 120;

export interface BanPage {
  readonly bans: BanRecord[];
  /** The `after` of the next page, or null on the last one. */
  readonly next: string | null;
}

function parse<T>(raw: string | null | undefined): T | undefined {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

export class BanStore {
  constructor(private readonly redis: RedisClient) {}

  /** Just the banned addresses and allow-list entries: what every instance keeps in memory. */
  async snapshot(): Promise<{ banned: string[]; allowed: string[] }> {
    const [banned, allowed] = await Promise.all([this.redis.hkeys(keys.bans()), this.redis.hkeys(keys.banAllow())]);
    return { banned, allowed };
  }

  /**
   * The subjects of the bans an operator made (not the gate's own) and the allow-list: what an
   * instance keeps with the gate off. Reads every record (HGETALL), which `snapshot` avoids: the
   * gate's records carry their evidence (up to 3.5 KB each), so this costs more, once a reload.
   */
  async operatorSnapshot(): Promise<{ banned: string[]; allowed: string[] }> {
    const [all, allowed] = await Promise.all([this.redis.hgetall(keys.bans()), this.redis.hkeys(keys.banAllow())]);
    const banned = Object.entries(all)
      .filter(([, raw]) => parse<BanRecord>(raw)?.source === 'operator')
      .map(([subject]) => subject);
    return { banned, allowed };
  }

  async isBanned(address: string): Promise<boolean> {
    return (await this.redis.hexists(keys.bans(), address)) === 1;
  }

  async get(address: string): Promise<BanRecord | undefined> {
    return parse<BanRecord>(await this.redis.hget(keys.bans(), address));
  }

  async list(): Promise<BanRecord[]> {
    const all = await this.redis.hgetall(keys.bans());
    return Object.values(all)
      .map((raw) => parse<BanRecord>(raw))
      .filter((r): r is BanRecord => r !== undefined)
      .sort((a, b) => a.bannedAt.localeCompare(b.bannedAt) || a.address.localeCompare(b.address));
  }

  /**
   * One page of bans in the order of their subjects (plain string order), starting after
   * `after` (exclusive): a cursor that stays valid while bans are added or lifted.
   */
  async page(limit: number, after?: string): Promise<BanPage> {
    const subjects = (await this.redis.hkeys(keys.bans())).sort();
    let start = 0;
    if (after !== undefined) {
      let high = subjects.length;
      while (start < high) {
        const mid = (start + high) >> 1;
        if (subjects[mid]! <= after) start = mid + 1;
        else high = mid;
      }
    }
    const slice = subjects.slice(start, start + limit);
    const raw = slice.length === 0 ? [] : await this.redis.hmget(keys.bans(), ...slice);
    const bans = raw.map((r) => parse<BanRecord>(r)).filter((r): r is BanRecord => r !== undefined);
    const next = start + limit < subjects.length ? slice[slice.length - 1]! : null;
    return { bans, next };
  }

  /**
   * Takes one of the minute's automatic bans, shared by every instance (a fixed window counted
   * in Redis, so the window comes from one place). Returns how many the minute has taken,
   * this one included: above the maximum, the caller must not ban.
   */
  takeBanSlot(nowMs: number): Promise<number> {
    return this.count(keys.banRate(Math.floor(nowMs / 60_000)));
  }

  /** The same, counted for one network (an IPv4 /24 or IPv6 /48) alone: its share of the minute. */
  takeNetworkBanSlot(nowMs: number, network: string): Promise<number> {
    return this.count(keys.banRateNetwork(Math.floor(nowMs / 60_000), network));
  }

  private async count(key: string): Promise<number> {
    const results = await this.redis.multi().incr(key).expire(key, BAN_RATE_TTL_S).exec();
    const [err, count] = results?.[0] ?? [new Error('the ban-rate transaction was discarded'), 0];
    if (err) throw err;
    return Number(count);
  }

  /** Adds the ban unless one exists (the first record and its evidence are kept). */
  async add(record: BanRecord): Promise<boolean> {
    const created = (await this.redis.hsetnx(keys.bans(), record.address, JSON.stringify(record))) === 1;
    if (created) {
      await publishEvent(this.redis, { type: 'ban', address: record.address });
      // The bans hash has no order; the overview's "recent bans" reads this short list instead.
      const { address, bannedAt, source, reasons } = record;
      await this.redis.multi().lpush(keys.recentBans(), JSON.stringify({ address, bannedAt, source, reasons })).ltrim(keys.recentBans(), 0, RECENT_BANS_KEPT - 1).exec();
    }
    return created;
  }

  async remove(addresses: readonly string[]): Promise<number> {
    if (addresses.length === 0) return 0;
    const removed = await this.redis.hdel(keys.bans(), ...addresses);
    for (const address of addresses) await publishEvent(this.redis, { type: 'ban', address });
    return removed;
  }

  /** The newest bans still in force, newest first (at most `limit`). */
  async recent(limit: number): Promise<Array<Pick<BanRecord, 'address' | 'bannedAt' | 'source' | 'reasons'>>> {
    const raw = await this.redis.lrange(keys.recentBans(), 0, RECENT_BANS_KEPT - 1);
    const seen = new Set<string>();
    const entries = raw
      .map((r) => parse<Pick<BanRecord, 'address' | 'bannedAt' | 'source' | 'reasons'>>(r))
      .filter((r): r is Pick<BanRecord, 'address' | 'bannedAt' | 'source' | 'reasons'> => r !== undefined && !seen.has(r.address) && Boolean(seen.add(r.address)));
    if (entries.length === 0) return [];
    const still = await this.redis.hmget(keys.bans(), ...entries.map((e) => e.address));
    return entries.filter((_, i) => still[i] !== null).slice(0, limit);
  }

  /** Just the allow-list entries (`network/bits`). */
  async allowedEntries(): Promise<string[]> {
    return this.redis.hkeys(keys.banAllow());
  }

  async allowList(): Promise<AllowEntry[]> {
    const all = await this.redis.hgetall(keys.banAllow());
    return Object.values(all)
      .map((raw) => parse<AllowEntry>(raw))
      .filter((r): r is AllowEntry => r !== undefined)
      .sort((a, b) => a.entry.localeCompare(b.entry));
  }

  async allow(entry: AllowEntry): Promise<void> {
    await this.redis.hset(keys.banAllow(), entry.entry, JSON.stringify(entry));
    await publishEvent(this.redis, { type: 'ban' });
  }

  async disallow(entry: string): Promise<boolean> {
    const removed = (await this.redis.hdel(keys.banAllow(), entry)) === 1;
    if (removed) await publishEvent(this.redis, { type: 'ban' });
    return removed;
  }

  async recordViolation(record: ViolationRecord): Promise<void> {
    await this.redis.lpush(keys.violations(), JSON.stringify(record));
    await this.redis.ltrim(keys.violations(), 0, VIOLATIONS_KEPT - 1);
  }

  async violations(limit: number): Promise<ViolationRecord[]> {
    const raw = await this.redis.lrange(keys.violations(), 0, Math.max(0, limit - 1));
    return raw.map((r) => parse<ViolationRecord>(r)).filter((r): r is ViolationRecord => r !== undefined);
  }
}
