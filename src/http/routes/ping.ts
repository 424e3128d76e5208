// GET /ping: proves the key works and tells which workspace it opens.
import type Router from '@koa/router';
import type { AppState } from '../state.js';

export function pingRoutes(router: Router<AppState>): void {
  router.get('/ping', (ctx) => {
    const { workspace } = ctx.state.principal!;
    ctx.body = { success: true, workspaceId: workspace.id, workspaceName: workspace.name, plan: workspace.plan };
  });
}
