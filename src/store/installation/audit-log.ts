// The audit trail of admin actions: one Redis list of JSON entries, newest first, trimmed to a
// bounded length in the same MULTI as each append, so it can never grow without limit.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export interface AuditEntry {
  /** ISO 8601 UTC time of the action. */
  readonly at: string;
  /** `cli:<os user>`, `admin-api` (bearer token) or `console` (the operator console's session). */
  readonly actor: string;
  /** What was done, e.g. `workspace.delete`, `key.rotate`, `player.export`. */
  readonly action: string;
  /** What it was done to, e.g. `workspace:ws_x`, `key:key_y`, `player:ws_x/42`. */
  readonly target: string;
  readonly workspaceId?: string;
  /** Small facts about the action (never a raw key, never a player's value). */
  readonly details?: Readonly<Record<string, string | number | boolean | null>>;
}

export class AuditLogStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxEntries: number,
  ) {}

  async append(entry: AuditEntry): Promise<void> {
    const replies = await this.redis
      .multi()
      .lpush(keys.auditLog(), JSON.stringify(entry))
      .ltrim(keys.auditLog(), 0, this.maxEntries - 1)
      .exec();
    const failed = replies?.find(([err]) => err);
    if (!replies || failed) throw failed?.[0] ?? new Error('audit MULTI was discarded');
  }

  /**
   * Renames exact JSON members in every entry (`from` to `to`, in the entries holding `within`,
   * or in all when it is ''), a page per script call, so that entries naming an erased player by
   * its id name it otherwise (lua/audit-rename.lua). Answers how many entries were changed.
   */
  async renameMembers(renames: ReadonlyArray<AuditRename>, page = 1000): Promise<number> {
    if (renames.length === 0) return 0;
    const triples = renames.flatMap((r) => [r.within, r.from, r.to]);
    let renamed = 0;
    for (let start = 0; ; start += page) {
      const [changed, length] = await this.redis.auditRename(keys.auditLog(), String(start), String(page), ...triples);
      renamed += Number(changed);
      if (start + page >= Number(length)) return renamed;
    }
  }

  /**
   * The newest `limit` entries that `filter` keeps, newest first (read in pages, so a filter
   * never loads the whole list at once). Unreadable entries are skipped. `stopAfter`, when it
   * says so for an entry, ends the walk there (entries are newest first: one older than a time
   * range's start ends it).
   */
  async list(limit: number, filter?: AuditFilter): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    const page = filter ? 1000 : limit;
    for (let start = 0; out.length < limit; start += page) {
      const raw = await this.redis.lrange(keys.auditLog(), start, start + page - 1);
      for (const line of raw) {
        const entry = parseEntry(line);
        if (!entry) continue;
        if (filter?.stopAfter?.(entry)) return out;
        if (!filter || filter.keep(entry)) out.push(entry);
        if (out.length === limit) break;
      }
      if (raw.length < page) break;
    }
    return out;
  }
}

/** A rename of an exact JSON member's text (lua/audit-rename.lua). */
export interface AuditRename {
  /** Text an entry must hold for the rename to apply there ('' for every entry). */
  readonly within: string;
  readonly from: string;
  readonly to: string;
}

export interface AuditFilter {
  keep(entry: AuditEntry): boolean;
  stopAfter?(entry: AuditEntry): boolean;
}

function parseEntry(line: string): AuditEntry | undefined {
  try {
    const entry = JSON.parse(line) as AuditEntry | null;
    return entry && typeof entry.action === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}
