// /admin/v1/audit: the newest audit entries, optionally of one workspace.
import type Router from '@koa/router';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { auditQuery } from '../../../schemas/admin.js';
import type { AdminOperations } from '../../operations.js';

const validateQuery = compile<{ limit?: string; workspace?: string; action?: string; actor?: string; since?: string; until?: string }>(auditQuery);

export function auditAdminRoutes(router: Router<AppState>, ops: AdminOperations): void {
  router.get('/audit', async (ctx) => {
    const query = validateQuery('query', ctx.query);
    const { limit, workspace, action, actor, since, until } = query;
    ctx.body = { success: true, data: await ops.readAudit({ limit, workspaceId: workspace, action, actor, since, until }) };
  });
}
