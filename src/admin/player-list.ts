// The players of a workspace for the console: newest written first, paged, or found by user id
// (exact, or by prefix), each with its version, size and the game server holding it. Read from
// the workspace's players list (store/workspaces/player-index.ts), so a page costs the same with
// a hundred players or a million; only the page's rows read their players' hashes. Not audited:
// it shows no player's data, as the workspace list shows none.
import { normalizeUserId } from '../domain/ids.js';
import { isoTime } from '../domain/entry.js';
import { badRequest } from '../errors.js';
import { PlayerIndexStore, type IndexCursor, type PlayerRow } from '../store/workspaces/player-index.js';
import type { AdminContext } from './context.js';
import { parsePositiveInt } from './inputs.js';

export const PLAYER_PAGE_DEFAULT = 25;
export const PLAYER_PAGE_MAX = 100;
/** User id characters (domain/ids.ts): a prefix of them holds no glob character for ZSCAN MATCH. */
const PREFIX = /^[A-Za-z0-9_.-]{1,64}$/;

export interface PlayerListRow {
  readonly userId: string;
  /** When the players list last saw it written; null for a player written before the list existed. */
  readonly lastWriteAt: string | null;
  readonly version: number;
  readonly keys: number | null;
  readonly bytes: number | null;
  readonly session: { readonly owner: string; readonly expiresAt: string } | null;
}

export interface PlayerList {
  readonly workspaceId: string;
  /** Players on the list (with data, written since the list exists or backfilled). */
  readonly listed: number;
  readonly players: readonly PlayerListRow[];
  /** Pass as `cursor` for the next page; null on the last one. */
  readonly next: string | null;
}

export interface PlayerListQuery {
  readonly limit?: string | number | undefined;
  readonly cursor?: string | undefined;
  /** Players whose id starts with this. */
  readonly prefix?: string | undefined;
  /** Exactly this player (found even when it predates the list). */
  readonly userId?: string | undefined;
}

function row(r: PlayerRow): PlayerListRow {
  return {
    userId: r.userId,
    lastWriteAt: r.lastWriteMs === null ? null : isoTime(r.lastWriteMs),
    version: r.version,
    keys: r.keys,
    bytes: r.bytes,
    session: r.session ? { owner: r.session.owner, expiresAt: isoTime(r.session.expiresAtMs) } : null,
  };
}

/** A newest-first cursor: `<ms>:<userId>`, the last row of the page before. */
function newestCursor(raw: string): IndexCursor {
  const match = /^(\d{1,15}):(.+)$/.exec(raw);
  const userId = match ? normalizeUserId(match[2]) : undefined;
  if (!match || userId === undefined) throw badRequest('cursor must be the `next` of the page before');
  return { beforeMs: Number(match[1]), userId };
}

export async function listPlayers(ctx: AdminContext, workspaceId: string, query: PlayerListQuery = {}): Promise<PlayerList> {
  await ctx.requireWorkspace(workspaceId);
  const limit = parsePositiveInt(query.limit ?? PLAYER_PAGE_DEFAULT, 'limit', PLAYER_PAGE_MAX);
  const index = new PlayerIndexStore(ctx.redis);
  const listed = await index.count(workspaceId);
  if (query.userId !== undefined) {
    const userId = normalizeUserId(query.userId);
    if (userId === undefined) throw badRequest('userId must be a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -');
    const [ms, exists] = await Promise.all([index.lastWrite(workspaceId, userId), index.exists(workspaceId, userId)]);
    const rows = exists ? await index.rows(workspaceId, [{ userId, ms }]) : [];
    return { workspaceId, listed, players: rows.map(row), next: null };
  }
  if (query.prefix !== undefined) {
    if (!PREFIX.test(query.prefix)) throw badRequest('prefix must be 1-64 characters from A-Z a-z 0-9 _ . -');
    const cursor = query.cursor ?? '0';
    if (!/^\d{1,20}$/.test(cursor)) throw badRequest('cursor must be the `next` of the page before');
    const { found, next } = await index.matching(workspaceId, query.prefix, limit, cursor);
    return { workspaceId, listed, players: (await index.rows(workspaceId, found)).map(row), next: next === '0' ? null : next };
  }
  const cursor = query.cursor === undefined ? undefined : newestCursor(query.cursor);
  const page = await index.newest(workspaceId, limit + 1, cursor);
  const shown = page.slice(0, limit);
  const last = shown[shown.length - 1];
  const next = page.length > limit && last ? `${last.ms}:${last.userId}` : null;
  return { workspaceId, listed, players: (await index.rows(workspaceId, shown)).map(row), next };
}

/**
 * Puts every player with data on the workspace's players list, once: for players written before
 * the list existed, or imported (an import writes players without the write path). SCANs the
 * keyspace (every master): an operator's command, not something a page does.
 */
export async function indexPlayers(
  ctx: AdminContext,
  workspaceId: string,
  onProgress?: (seen: number, added: number) => void,
): Promise<{ workspaceId: string; seen: number; added: number; listed: number }> {
  await ctx.requireWorkspace(workspaceId);
  const index = new PlayerIndexStore(ctx.redis);
  const { seen, added } = await index.backfill(workspaceId, onProgress);
  await ctx.audit('players.index', `workspace:${workspaceId}`, { workspaceId, details: { seen, added } });
  return { workspaceId, seen, added, listed: await index.count(workspaceId) };
}
