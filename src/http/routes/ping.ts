// GET /ping: proves the key works and that storage answers, and tells which workspace the key
// opens. The workspace is read from Redis rather than from the key cache: most requests need
// no Redis command for the key or the limit, so this is the one that shows storage is up (a
// stalled Redis answers 503 here as everywhere), and it gives the current name and plan.
import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { ErrorCode, unauthorized } from '../../errors.js';
import type { WorkspaceStore } from '../../store/workspaces/workspaces.js';
import { chain } from '../chain.js';
import { sendJsonValue } from '../json.js';
import type { AppState } from '../state.js';

/** `guard` authenticates and counts the request against the plan (app.ts). */
export function pingRoutes(router: Router<AppState>, guard: Middleware<AppState>, workspaces: WorkspaceStore): void {
  router.get('/ping', chain(guard, async (ctx) => {
    const workspace = await workspaces.get(ctx.state.principal!.workspace.id);
    // Deleted since the key was looked up: its keys were revoked first, and this one is too.
    if (!workspace) throw unauthorized('API key has been revoked', ErrorCode.KEY_REVOKED);
    sendJsonValue(ctx, { success: true, workspaceId: workspace.id, workspaceName: workspace.name, plan: workspace.plan });
  }));
}
