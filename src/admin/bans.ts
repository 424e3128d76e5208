// Operators' side of platform-only access, shared by the CLI and the admin API: list, add and
// lift bans, manage the allow-list, read recent violations, and mark development keys. Every
// write publishes the event that brings each instance's in-process lists up to date.
import type { AllowEntry, BanRecord, ViolationRecord } from '../domain/ban.js';
import type { ApiKeyRecord } from '../domain/types.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { CidrList, IPV6_BAN_PREFIX, normalizeIp, parseBanSubject, parseCidr, subjectAddress } from '../domain/address.js';
import { ApiKeyStore } from '../store/workspaces/api-keys.js';
import { BanStore, VIOLATIONS_KEPT, type BanPage } from '../store/installation/bans.js';
import { publishEvent } from '../store/redis/events.js';
import type { RedisClient } from '../store/redis/redis.js';
import type { AdminContext } from './context.js';

const NOTE_MAX = 500;
/** A page of `ban list` and GET /admin/v1/bans: 100 by default, 1000 at most. */
export const BAN_PAGE_DEFAULT = 100;
export const BAN_PAGE_MAX = 1000;

function address(raw: string): string {
  const normalized = normalizeIp(raw);
  if (!normalized) throw badRequest(`"${raw}" is not an IPv4 or IPv6 address`);
  return normalized;
}

/** What a ban of `raw` covers: an IPv4 address, or an IPv6 /64 (given as an address of it or as the range). */
function subject(raw: string): string {
  const found = parseBanSubject(raw);
  if (!found) throw badRequest(`"${raw}" is not an IPv4 or IPv6 address (or an IPv6 /64 range)`);
  return found;
}

function note(raw: string | undefined): string | undefined {
  const text = raw?.trim();
  if (!text) return undefined;
  if (text.length > NOTE_MAX) throw badRequest(`A note or reason must be at most ${NOTE_MAX} characters`);
  return text;
}

export class BanOperations {
  readonly bans: BanStore;
  private readonly apiKeys: ApiKeyStore;

  constructor(
    private readonly redis: RedisClient,
    private readonly clock: () => number = Date.now,
    /** Where the writes are recorded (AdminOperations, which names the actor); none: not audited. */
    private readonly auditor?: Pick<AdminContext, 'audit'>,
  ) {
    this.bans = new BanStore(redis);
    this.apiKeys = new ApiKeyStore(redis);
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  /** Every ban, oldest first: for tests and small lists; operators page with `pageBans`. */
  listBans(): Promise<BanRecord[]> {
    return this.bans.list();
  }

  /** One page of bans in subject order, after the cursor `after` (the `next` of the page before). */
  pageBans(options: { limit?: number | undefined; after?: string | undefined } = {}): Promise<BanPage> {
    const limit = options.limit ?? BAN_PAGE_DEFAULT;
    if (!Number.isInteger(limit) || limit < 1 || limit > BAN_PAGE_MAX) {
      throw badRequest(`limit must be a whole number from 1 to ${BAN_PAGE_MAX}`);
    }
    return this.bans.page(limit, options.after);
  }

  /**
   * The ban covering `raw`: its subject's, or (IPv6) one made for that address alone before
   * bans covered /64s.
   */
  async getBan(raw: string): Promise<BanRecord> {
    const ban = (await this.bans.get(subject(raw))) ?? (await this.legacyBan(raw));
    if (!ban) throw notFound(`${raw} is not banned`);
    return ban;
  }

  private async legacyBan(raw: string): Promise<BanRecord | undefined> {
    const exact = normalizeIp(raw);
    return exact !== undefined && exact.includes(':') ? this.bans.get(exact) : undefined;
  }

  /**
   * Bans by hand; an IPv6 address is banned with its whole /64, as the gate does. An
   * allow-listed address cannot be banned: lift the allow entry first.
   */
  async addBan(input: { address: string; reason?: string | undefined }): Promise<BanRecord> {
    const text = subject(input.address);
    const entry = await this.allowEntryCovering(text);
    if (entry) throw conflict(`${text} is allow-listed (${entry.entry}) and so is never banned: remove the allow entry first`);
    const record: BanRecord = {
      address: text,
      bannedAt: this.now(),
      source: 'operator',
      reasons: ['operator'],
      note: note(input.reason),
    };
    if (!(await this.bans.add(record))) {
      const existing = await this.bans.get(text);
      throw conflict(`${text} is already banned (since ${existing?.bannedAt ?? 'earlier'})`);
    }
    await this.auditor?.audit('ban.add', `address:${text}`, { details: { reason: record.note ?? null } });
    return record;
  }

  /** Lifts a ban on every instance; returns the record that was lifted. */
  async removeBan(raw: string): Promise<BanRecord> {
    const ban = await this.getBan(raw);
    await this.bans.remove([ban.address]);
    await this.auditor?.audit('ban.lift', `address:${ban.address}`, { details: { bannedAt: ban.bannedAt } });
    return ban;
  }

  allowList(): Promise<AllowEntry[]> {
    return this.bans.allowList();
  }

  /** Allow-lists an address or range, and lifts the bans it covers (returned as `lifted`). */
  async allow(input: { entry: string; note?: string | undefined }): Promise<AllowEntry & { lifted: string[] }> {
    const cidr = parseCidr(input.entry);
    if (!cidr) throw badRequest(`"${input.entry}" is not an IPv4 or IPv6 address or range (such as 203.0.113.0/24)`);
    const entry: AllowEntry = { entry: cidr.text, addedAt: this.now(), note: note(input.note) };
    await this.bans.allow(entry);
    const range = new CidrList([cidr]);
    // A /64 ban is lifted when the entry covers all of it; an entry inside it lets its own
    // addresses through anyway (allow-listed addresses are never refused).
    const lifted = (await this.bans.list())
      .map((b) => b.address)
      .filter((a) => {
        const ip = subjectAddress(a);
        if (!ip || !range.contains(ip)) return false;
        return !a.includes('/') || cidr.bits <= IPV6_BAN_PREFIX;
      });
    await this.bans.remove(lifted);
    await this.auditor?.audit('ban.allow', `address:${entry.entry}`, { details: { lifted: lifted.length } });
    return { ...entry, lifted };
  }

  async disallow(raw: string): Promise<{ entry: string }> {
    const cidr = parseCidr(raw);
    if (!cidr) throw badRequest(`"${raw}" is not an IPv4 or IPv6 address or range`);
    if (!(await this.bans.disallow(cidr.text))) throw notFound(`${cidr.text} is not on the allow-list`);
    await this.auditor?.audit('ban.disallow', `address:${cidr.text}`);
    return { entry: cidr.text };
  }

  async violations(options: { limit?: number; address?: string } = {}): Promise<ViolationRecord[]> {
    const limit = options.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > VIOLATIONS_KEPT) {
      throw badRequest(`limit must be a whole number from 1 to ${VIOLATIONS_KEPT}`);
    }
    if (options.address === undefined) return this.bans.violations(limit);
    const wanted = address(options.address);
    const all = await this.bans.violations(VIOLATIONS_KEPT);
    return all.filter((v) => v.address === wanted).slice(0, limit);
  }

  /** Marks a key as a development key (editor play-tests may use it) or back as production. */
  async setKeyDev(keyId: string, dev: boolean): Promise<ApiKeyRecord> {
    const found = await this.apiKeys.findById(keyId);
    if (!found) throw notFound(`API key ${keyId} not found`);
    await this.apiKeys.setDev(found.keyHash, dev);
    await publishEvent(this.redis, { type: 'key', keyHash: found.keyHash });
    await this.auditor?.audit('key.set-dev', `key:${keyId}`, { workspaceId: found.record.workspaceId, details: { dev } });
    return { ...found.record, dev };
  }

  private async allowEntryCovering(text: string): Promise<AllowEntry | undefined> {
    const ip = subjectAddress(text)!;
    for (const entry of await this.bans.allowList()) {
      if (CidrList.of([entry.entry]).contains(ip)) return entry;
    }
    return undefined;
  }
}
