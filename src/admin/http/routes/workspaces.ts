// /admin/v1/workspaces
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import type { AppState } from '../../../http/state.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AdminOperations } from '../../operations.js';
import { compile } from '../../../http/validate.js';
import { createWorkspaceBody } from '../../../schemas/admin.js';

const validateCreate = compile<{ name: string; plan?: string }>(createWorkspaceBody);

export function workspaceAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  router.post('/workspaces', body, async (ctx) => {
    const input = validateCreate('body', ctx.request.body);
    ctx.body = { success: true, data: await ops.createWorkspace(input) };
  });

  router.get('/workspaces/:id', async (ctx) => {
    ctx.body = { success: true, data: await ops.getWorkspace(ctx.params['id']!) };
  });
}
