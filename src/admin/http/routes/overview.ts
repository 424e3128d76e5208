// /admin/v1/overview and /admin/v1/gate: the console's home page and the gate's state for the
// bans page (admin/overview.ts).
import type Router from '@koa/router';
import type { AppState } from '../../../http/state.js';
import type { AdminOperations } from '../../operations.js';

export function overviewAdminRoutes(router: Router<AppState>, ops: AdminOperations): void {
  router.get('/overview', async (ctx) => {
    ctx.body = { success: true, data: await ops.overview() };
  });

  router.get('/gate', (ctx) => {
    ctx.body = { success: true, data: ops.gateState() };
  });
}
