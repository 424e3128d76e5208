// GET /players: the workspace's players, in pages, by user id prefix and holding a data key
// (store/workspaces/player-pages.ts; docs/api.md). A read: any key's scope may list.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import { isoTime } from '../../domain/entry.js';
import { badRequest } from '../../errors.js';
import { playersQuery } from '../../schemas/players.js';
import { PLAYERS_PAGE_DEFAULT, PLAYERS_PAGE_MAX, type PlayerPages } from '../../store/workspaces/player-pages.js';
import { chain } from '../chain.js';
import { sendJsonValue } from '../json.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';

const validate = compile<{ prefix?: string; hasKey?: string; limit?: string; cursor?: string }>(playersQuery);

export function playerRoutes(router: Router<AppState>, guard: Middleware<AppState>, pages: PlayerPages): void {
  router.get('/players', chain(guard, async (ctx) => {
    const query = validate('query', parseQuery(ctx.querystring));
    const limit = query.limit === undefined ? PLAYERS_PAGE_DEFAULT : Number(query.limit);
    if (limit < 1 || limit > PLAYERS_PAGE_MAX) throw badRequest(`Invalid field "limit" in query: 1-${PLAYERS_PAGE_MAX}`);
    const page = await pages.page(ctx.state.principal!.workspace.id, { prefix: query.prefix, hasKey: query.hasKey, limit, cursor: query.cursor });
    sendJsonValue(ctx, {
      success: true,
      data: { players: page.players.map((p) => ({ userId: p.userId, lastWriteAt: isoTime(p.lastWriteMs) })), next: page.next },
    });
  }));
}
