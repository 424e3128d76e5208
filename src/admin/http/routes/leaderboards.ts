// /admin/v1/workspaces/:id/leaderboards: a workspace's boards for operators (admin/leaderboards.ts).
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { adminBoardPageQuery, adminBoardRankQuery, updateBoardBody } from '../../../schemas/admin-leaderboards.js';
import type { AdminOperations } from '../../operations.js';

const validatePage = compile<{ period?: string; previous?: 'true' | 'false'; order?: string; limit?: string; after?: string }>(adminBoardPageQuery);
const validateRank = compile<{ period?: string; previous?: 'true' | 'false'; order?: string; around?: string }>(adminBoardRankQuery);
const validateUpdate = compile<{ periods?: string[]; follow?: string | null }>(updateBoardBody);
const BOARDS = '/workspaces/:id/leaderboards';
const BOARD = `${BOARDS}/:board`;

export function leaderboardAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  router.get(BOARDS, async (ctx) => {
    ctx.body = { success: true, data: await ops.leaderboards.list(ctx.params['id']!) };
  });

  router.get(BOARD, async (ctx) => {
    const query = validatePage('query', ctx.query);
    const { id, board } = ctx.params as { id: string; board: string };
    ctx.body = { success: true, data: await ops.leaderboards.page(id, board, { ...query, previous: query.previous === 'true' }) };
  });

  // periods and follow: the board's config (a board not written yet is registered by it).
  router.patch(BOARD, body, async (ctx) => {
    const input = validateUpdate('body', ctx.request.body);
    const { id, board } = ctx.params as { id: string; board: string };
    let record = input.periods === undefined ? undefined : await ops.leaderboards.setPeriods(id, board, input.periods);
    if (input.follow !== undefined) record = await ops.leaderboards.follow(id, board, input.follow);
    ctx.body = { success: true, data: record };
  });

  router.delete(BOARD, async (ctx) => {
    const { id, board } = ctx.params as { id: string; board: string };
    ctx.body = { success: true, data: await ops.leaderboards.delete(id, board) };
  });

  router.post(`${BOARD}/reset`, async (ctx) => {
    const { id, board } = ctx.params as { id: string; board: string };
    ctx.body = { success: true, data: await ops.leaderboards.reset(id, board) };
  });

  router.get(`${BOARD}/entries/:userId`, async (ctx) => {
    const query = validateRank('query', ctx.query);
    const { id, board, userId } = ctx.params as { id: string; board: string; userId: string };
    ctx.body = { success: true, data: await ops.leaderboards.rank(id, board, userId, { ...query, previous: query.previous === 'true' }) };
  });

  router.delete(`${BOARD}/entries/:userId`, async (ctx) => {
    const { id, board, userId } = ctx.params as { id: string; board: string; userId: string };
    ctx.body = { success: true, data: await ops.leaderboards.removeEntry(id, board, userId) };
  });
}
