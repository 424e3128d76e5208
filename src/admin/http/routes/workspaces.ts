// /admin/v1/workspaces: create, list, show, rename or change plan, delete, usage.
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import type { AppState } from '../../../http/state.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AdminOperations } from '../../operations.js';
import { compile } from '../../../http/validate.js';
import { createWorkspaceBody, deleteWorkspaceQuery, updateWorkspaceBody, usageQuery } from '../../../schemas/admin.js';

const validateCreate = compile<{ name: string; plan?: string; id?: string }>(createWorkspaceBody);
const validateUpdate = compile<{ name?: string; plan?: string }>(updateWorkspaceBody);
const validateUsage = compile<{ days?: string }>(usageQuery);
const validateDelete = compile<{ force?: 'true' | 'false' }>(deleteWorkspaceQuery);

export function workspaceAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  router.get('/workspaces', async (ctx) => {
    ctx.body = { success: true, data: await ops.listWorkspaces() };
  });

  router.post('/workspaces', body, async (ctx) => {
    const input = validateCreate('body', ctx.request.body);
    ctx.status = 201;
    ctx.body = { success: true, data: await ops.createWorkspace(input) };
  });

  router.get('/workspaces/:id', async (ctx) => {
    ctx.body = { success: true, data: await ops.showWorkspace(ctx.params['id']!) };
  });

  router.patch('/workspaces/:id', body, async (ctx) => {
    const input = validateUpdate('body', ctx.request.body);
    const id = ctx.params['id']!;
    let workspace = await ops.getWorkspace(id);
    if (input.name !== undefined) workspace = await ops.renameWorkspace(id, input.name);
    if (input.plan !== undefined) workspace = await ops.setPlan(id, input.plan);
    ctx.body = { success: true, data: workspace };
  });

  router.delete('/workspaces/:id', async (ctx) => {
    const query = validateDelete('query', ctx.query);
    ctx.body = { success: true, data: await ops.deleteWorkspace(ctx.params['id']!, { force: query.force === 'true' }) };
  });

  router.get('/workspaces/:id/usage', async (ctx) => {
    const query = validateUsage('query', ctx.query);
    ctx.body = { success: true, data: await ops.usage(ctx.params['id']!, query.days) };
  });
}
