// A user id looked up in every workspace (the console's "find a player anywhere", for a support
// ticket that names a player and no game): the workspaces in id order, at most `limit` of them
// checked per call, each by one EXISTS of the player's hash in its own slot (and the player's
// row, as the players list shows it, where it exists). `next` continues after the last
// workspace checked, so a large installation is searched in bounded pages, never in one call.
// Not audited: like the players list, it shows no player's data.
import { normalizeUserId } from '../domain/ids.js';
import { isoTime } from '../domain/entry.js';
import { badRequest } from '../errors.js';
import { PlayerIndexStore } from '../store/workspaces/player-index.js';
import type { AdminContext } from './context.js';
import { parsePositiveInt } from './inputs.js';

export const SEARCH_WORKSPACES_DEFAULT = 100;
export const SEARCH_WORKSPACES_MAX = 500;

export interface PlayerSearchQuery {
  readonly userId?: string | undefined;
  readonly limit?: string | number | undefined;
  /** The `next` of the call before: the last workspace id it checked. */
  readonly cursor?: string | undefined;
}

export interface PlayerSearchMatch {
  readonly workspaceId: string;
  readonly name: string;
  readonly lastWriteAt: string | null;
  readonly version: number;
  readonly keys: number | null;
  readonly bytes: number | null;
  readonly session: { readonly owner: string; readonly expiresAt: string } | null;
}

export interface PlayerSearch {
  readonly userId: string;
  /** Workspaces checked by this call, and in the installation. */
  readonly checked: number;
  readonly workspaces: number;
  readonly matches: readonly PlayerSearchMatch[];
  /** Pass as `cursor` to check the next workspaces; null once every one is checked. */
  readonly next: string | null;
}

export async function searchPlayer(ctx: AdminContext, query: PlayerSearchQuery): Promise<PlayerSearch> {
  const userId = normalizeUserId(query.userId);
  if (userId === undefined) throw badRequest('userId must be a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -');
  const limit = parsePositiveInt(query.limit ?? SEARCH_WORKSPACES_DEFAULT, 'limit', SEARCH_WORKSPACES_MAX);
  const all = (await ctx.workspaces.list()).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const after = query.cursor;
  const rest = after === undefined ? all : all.filter((w) => w.id > after);
  const page = rest.slice(0, limit);
  const index = new PlayerIndexStore(ctx.redis);
  const found = await Promise.all(page.map(async (w) => ((await index.exists(w.id, userId)) ? w : undefined)));
  const matches: PlayerSearchMatch[] = [];
  for (const w of found) {
    if (!w) continue;
    const ms = await index.lastWrite(w.id, userId);
    const [r] = await index.rows(w.id, [{ userId, ms }]);
    if (!r) continue;
    matches.push({
      workspaceId: w.id,
      name: w.name,
      lastWriteAt: r.lastWriteMs === null ? null : isoTime(r.lastWriteMs),
      version: r.version,
      keys: r.keys,
      bytes: r.bytes,
      session: r.session ? { owner: r.session.owner, expiresAt: isoTime(r.session.expiresAtMs) } : null,
    });
  }
  const last = page[page.length - 1];
  return { userId, checked: page.length, workspaces: all.length, matches, next: rest.length > limit && last ? last.id : null };
}
