// /data/versions and /data/version: a player's restore points read from game code (ProfileStore's
// "versions" of a profile), with a write key: the list, newest first, and the whole player at
// one of them (docs/history.md). Restoring is support's (admin API), or a save of what was read.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { parse as parseQuery } from 'node:querystring';
import { HISTORY_PAGE_DEFAULT, HISTORY_PAGE_MAX, listVersions, versionData } from '../../saves/player-versions.js';
import { badRequest } from '../../errors.js';
import { versionQuery, versionsQuery } from '../../schemas/data.js';
import type { PlayerDataStore } from '../../store/players/player-data.js';
import { requireWriteScope } from '../middleware/authenticate.js';
import { chargeRead } from '../byte-budget.js';
import { chain } from '../chain.js';
import { sendJsonValue } from '../json.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';
import { userIdOf } from './data.js';

const validateList = compile<{ userId: string; limit?: string; before?: string }>(versionsQuery);
const validateOne = compile<{ userId: string; version: string }>(versionQuery);

export function versionRoutes(router: Router<AppState>, guard: Middleware<AppState>, players: PlayerDataStore): void {
  router.get('/data/versions', chain(guard, requireWriteScope, async (ctx) => {
    const query = validateList('query', parseQuery(ctx.querystring));
    const limit = query.limit === undefined ? HISTORY_PAGE_DEFAULT : Number(query.limit);
    if (limit < 1 || limit > HISTORY_PAGE_MAX) throw badRequest(`Invalid field "limit" in query: 1-${HISTORY_PAGE_MAX}`);
    const userId = userIdOf(query.userId);
    // The list is short, but it is rebuilt from the whole player and its history: a large one
    // is charged to the byte budget by what is read, and read in the workspace's heavy turn.
    const page = await listVersions(
      players,
      ctx.state.principal!.workspace.id,
      userId,
      { limit, before: query.before === undefined ? undefined : Number(query.before) },
      (bytes) => chargeRead(ctx, bytes),
    );
    sendJsonValue(ctx, { success: true, data: { userId, ...page } });
  }));

  router.get('/data/version', chain(guard, requireWriteScope, async (ctx) => {
    const query = validateOne('query', parseQuery(ctx.querystring));
    const userId = userIdOf(query.userId);
    const version = Number(query.version);
    const { currentVersion, data } = await versionData(players, ctx.state.principal!.workspace.id, userId, version, (bytes) => chargeRead(ctx, bytes));
    sendJsonValue(ctx, { success: true, data: { userId, version, currentVersion, data } });
  }));
}
