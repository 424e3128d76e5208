// /admin/v1/workspaces/:id/keys and /admin/v1/keys/:keyId
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import type { AppState } from '../../../http/state.js';
import type { AdminOperations } from '../../operations.js';

export function keyAdminRoutes(router: Router<AppState>, ops: AdminOperations, _config: Config): void {
  router.get('/workspaces/:id/keys', async (ctx) => {
    ctx.body = { success: true, data: await ops.listKeys(ctx.params['id']!) };
  });

  router.post('/workspaces/:id/keys', async (ctx) => {
    ctx.body = { success: true, data: await ops.createKey(ctx.params['id']!) };
  });

  router.post('/keys/:keyId/revoke', async (ctx) => {
    ctx.body = { success: true, data: await ops.revokeKey(ctx.params['keyId']!) };
  });
}
