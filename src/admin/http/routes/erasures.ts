// /admin/v1/erasures, /admin/v1/workspaces/:id/games and .../erasure-players: erase a player,
// follow the jobs, map the platform's games to workspaces, and name the players an erasure of a
// user id also erases in a workspace (admin/erasures.ts).
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { eraseBody, erasureListQuery, erasurePlayersBody, gamesBody } from '../../../schemas/erasure.js';
import type { AdminOperations } from '../../operations.js';

const validateErase = compile<{ userId: string | number; workspaceId?: string; allWorkspaces?: true }>(eraseBody);
const validateList = compile<{ state?: string; user?: string; limit?: string }>(erasureListQuery);
const validateGames = compile<{ gameIds: Array<string | number> }>(gamesBody);
const validateErasurePlayers = compile<{ templates: string[] }>(erasurePlayersBody);

export function erasureAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  router.post('/erasures', body, async (ctx) => {
    const input = validateErase('body', ctx.request.body);
    ctx.status = 201;
    ctx.body = { success: true, data: await ops.erasures.request(input) };
  });

  router.get('/erasures', async (ctx) => {
    const query = validateList('query', { ...ctx.query });
    ctx.body = { success: true, data: await ops.erasures.list({ state: query.state, userId: query.user, limit: query.limit }) };
  });

  router.get('/erasures/:jobId', async (ctx) => {
    ctx.body = { success: true, data: await ops.erasures.show(ctx.params['jobId']!) };
  });

  router.post('/erasures/:jobId/dismiss', async (ctx) => {
    ctx.body = { success: true, data: await ops.erasures.dismiss(ctx.params['jobId']!) };
  });

  router.get('/workspaces/:id/games', async (ctx) => {
    ctx.body = { success: true, data: await ops.erasures.gamesOf(ctx.params['id']!) };
  });

  router.put('/workspaces/:id/games', body, async (ctx) => {
    const input = validateGames('body', ctx.request.body);
    ctx.body = { success: true, data: await ops.erasures.setGames(ctx.params['id']!, input.gameIds) };
  });

  router.get('/workspaces/:id/erasure-players', async (ctx) => {
    ctx.body = { success: true, data: await ops.erasures.erasurePlayersOf(ctx.params['id']!) };
  });

  router.put('/workspaces/:id/erasure-players', body, async (ctx) => {
    const input = validateErasurePlayers('body', ctx.request.body);
    ctx.body = { success: true, data: await ops.erasures.setErasurePlayers(ctx.params['id']!, input.templates) };
  });
}
