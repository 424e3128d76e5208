// /admin/v1/workspaces/:id/players/:userId: one player's data for support staff.
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { adminSendMessageBody, deleteMessagesQuery, deletePlayerQuery, historyQuery, playerListQuery, playerQuery, playerSearchQuery, restorePlayerBody, setPlayerBody } from '../../../schemas/admin.js';
import type { AdminOperations } from '../../operations.js';

const validateQuery = compile<{ key?: string; purpose?: 'export' | 'view' }>(playerQuery);
const validateSet = compile<{ key: string; value: unknown; ifVersion?: number }>(setPlayerBody);
const validateDelete = compile<{ key?: string; ifVersion?: string }>(deletePlayerQuery);
const validateHistory = compile<{ limit?: string; before?: string }>(historyQuery);
const validateRestore = compile<{ version: number; force?: boolean }>(restorePlayerBody);
const validateList = compile<{ limit?: string; cursor?: string; prefix?: string; userId?: string }>(playerListQuery);
const validateSearch = compile<{ userId: string; limit?: string; cursor?: string }>(playerSearchQuery);
const validateSendMessage = compile<{ message: unknown; ttlSeconds?: number }>(adminSendMessageBody);
const validateDeleteMessages = compile<{ id?: string }>(deleteMessagesQuery);
const PLAYER = '/workspaces/:id/players/:userId';

export function playerAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  // The players list: newest written first, or a search by id (admin/player-list.ts).
  router.get('/workspaces/:id/players', async (ctx) => {
    const query = validateList('query', ctx.query);
    ctx.body = { success: true, data: await ops.listPlayers(ctx.params['id']!, query) };
  });

  // A user id in every workspace, a bounded page of workspaces a call (admin/player-search.ts).
  router.get('/players/search', async (ctx) => {
    const query = validateSearch('query', ctx.query);
    ctx.body = { success: true, data: await ops.searchPlayer(query) };
  });

  // Without ?key, the export: every key with its value and update time.
  router.get(PLAYER, async (ctx) => {
    const { key, purpose } = validateQuery('query', ctx.query);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = {
      success: true,
      data: key === undefined ? await ops.exportPlayer(id, userId, purpose) : await ops.getPlayerValue(id, userId, key),
    };
  });

  router.put(PLAYER, body, async (ctx) => {
    const input = validateSet('body', ctx.request.body);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.setPlayerValue(id, userId, input.key, input.value, input.ifVersion) };
  });

  router.delete(PLAYER, async (ctx) => {
    const { key, ifVersion } = validateDelete('query', ctx.query);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.deletePlayerData(id, userId, key, ifVersion === undefined ? undefined : Number(ifVersion)) };
  });

  router.get(`${PLAYER}/session`, async (ctx) => {
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.playerSession(id, userId) };
  });

  router.delete(`${PLAYER}/session`, async (ctx) => {
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.releasePlayerSession(id, userId) };
  });

  router.get(`${PLAYER}/history`, async (ctx) => {
    const { limit, before } = validateHistory('query', ctx.query);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.playerHistory(id, userId, { limit, before }) };
  });

  router.get(`${PLAYER}/history/:version`, async (ctx) => {
    const { id, userId, version } = ctx.params as { id: string; userId: string; version: string };
    // parseVersion (admin/inputs.ts) answers 400 for what is not a whole number.
    ctx.body = { success: true, data: await ops.playerAtVersion(id, userId, version) };
  });

  router.post(`${PLAYER}/restore`, body, async (ctx) => {
    const input = validateRestore('body', ctx.request.body);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.restorePlayer(id, userId, input.version, { force: input.force }) };
  });

  router.get(`${PLAYER}/messages`, async (ctx) => {
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.messages.list(id, userId) };
  });

  router.post(`${PLAYER}/messages`, body, async (ctx) => {
    const input = validateSendMessage('body', ctx.request.body);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.messages.send(id, userId, input.message, input.ttlSeconds) };
  });

  router.delete(`${PLAYER}/messages`, async (ctx) => {
    const query = validateDeleteMessages('query', ctx.query);
    const { id, userId } = ctx.params as { id: string; userId: string };
    ctx.body = { success: true, data: await ops.messages.delete(id, userId, query.id) };
  });
}
