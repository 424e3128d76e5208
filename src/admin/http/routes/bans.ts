// /admin/v1/bans, /admin/v1/ban-allow, /admin/v1/violations and /admin/v1/keys/:keyId/dev:
// the operator's side of platform-only access. Addresses and ranges go in the path
// URL-encoded (a range's slash as %2F).
import type Router from '@koa/router';
import type { Config } from '../../../config.js';
import { jsonBody } from '../../../http/middleware/json-body.js';
import type { AppState } from '../../../http/state.js';
import { compile } from '../../../http/validate.js';
import { addBanBody, allowBody, bansQuery, keyDevBody, violationsQuery } from '../../../schemas/gate-admin.js';
import type { AdminOperations } from '../../operations.js';

const validateAddBan = compile<{ address: string; reason?: string }>(addBanBody);
const validateAllow = compile<{ entry: string; note?: string }>(allowBody);
const validateKeyDev = compile<{ dev: boolean }>(keyDevBody);
const validateBans = compile<{ limit?: string; after?: string }>(bansQuery);
const validateViolations = compile<{ limit?: string; address?: string }>(violationsQuery);

export function banAdminRoutes(router: Router<AppState>, ops: AdminOperations, config: Config): void {
  const { bans } = ops;
  const body = jsonBody(config.limits.maxBodyBytes);

  router.get('/bans', async (ctx) => {
    const query = validateBans('query', { ...ctx.query });
    const limit = query.limit === undefined ? undefined : Number(query.limit);
    ctx.body = { success: true, data: await bans.pageBans({ limit, after: query.after }) };
  });

  router.post('/bans', body, async (ctx) => {
    ctx.body = { success: true, data: await bans.addBan(validateAddBan('body', ctx.request.body)) };
  });

  router.get('/bans/:address', async (ctx) => {
    ctx.body = { success: true, data: await bans.getBan(ctx.params['address']!) };
  });

  router.delete('/bans/:address', async (ctx) => {
    ctx.body = { success: true, data: await bans.removeBan(ctx.params['address']!) };
  });

  router.get('/ban-allow', async (ctx) => {
    ctx.body = { success: true, data: await bans.allowList() };
  });

  router.post('/ban-allow', body, async (ctx) => {
    ctx.body = { success: true, data: await bans.allow(validateAllow('body', ctx.request.body)) };
  });

  router.delete('/ban-allow/:entry', async (ctx) => {
    ctx.body = { success: true, data: await bans.disallow(ctx.params['entry']!) };
  });

  router.get('/violations', async (ctx) => {
    const query = validateViolations('query', { ...ctx.query });
    const options = {
      ...(query.limit === undefined ? {} : { limit: Number(query.limit) }),
      ...(query.address === undefined ? {} : { address: query.address }),
    };
    ctx.body = { success: true, data: await bans.violations(options) };
  });

  router.post('/keys/:keyId/dev', body, async (ctx) => {
    const { dev } = validateKeyDev('body', ctx.request.body);
    ctx.body = { success: true, data: await bans.setKeyDev(ctx.params['keyId']!, dev) };
  });
}
