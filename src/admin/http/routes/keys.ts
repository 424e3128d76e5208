// /admin/v1/workspaces/:id/keys and /admin/v1/keys/:keyId: create, list, revoke, rotate.
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { createKeyBody, rotateKeyBody } from '../../../schemas/admin.js';
import type { AdminOperations, KeyOptions, RotateOptions } from '../../operations.js';

const validateCreate = compile<KeyOptions>(createKeyBody);
const validateRotate = compile<RotateOptions>(rotateKeyBody);

export function keyAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const body = jsonBody(config.limits.maxBodyBytes);

  router.get('/workspaces/:id/keys', async (ctx) => {
    ctx.body = { success: true, data: await ops.listKeys(ctx.params['id']!) };
  });

  // The body is optional: no body makes a write key that never expires.
  router.post('/workspaces/:id/keys', body, async (ctx) => {
    const input = validateCreate('body', ctx.request.body ?? {});
    ctx.status = 201;
    ctx.body = { success: true, data: await ops.createKey(ctx.params['id']!, input) };
  });

  router.post('/keys/:keyId/revoke', async (ctx) => {
    ctx.body = { success: true, data: await ops.revokeKey(ctx.params['keyId']!) };
  });

  router.post('/keys/:keyId/rotate', body, async (ctx) => {
    const input = validateRotate('body', ctx.request.body ?? {});
    ctx.status = 201;
    ctx.body = { success: true, data: await ops.rotateKey(ctx.params['keyId']!, input) };
  });
}
