// Reference for the set scenario (issue 28's target): Koa + @koa/router taking set's request
// as the service takes it (its body reader and its ajv schema, service-request.ts), one HSET
// of the JSON-encoded value, and set's answer (the value echoed with its updated_at). No key
// check, limit, version, history or script: the least a Koa service must do for this request.
import Router from '@koa/router';
import { createServer } from 'node:http';
import { setBody } from '../../src/schemas/data.js';
import type { AppState } from '../../src/http/state.js';
import { listenFromEnv, referenceRedis } from './listen.js';
import { compile, readBody, referenceApp, referencePlayerKey } from './service-request.js';

const validateSet = compile<{ userId: string | number; key: string; value: unknown }>(setBody);
const redis = referenceRedis();
const app = referenceApp();
const router = new Router<AppState>({ prefix: '/api/v1' });
router.post('/data/set', readBody, async (ctx) => {
  const { userId, key, value } = validateSet('body', ctx.request.body);
  const updatedAt = new Date().toISOString();
  await redis.hset(referencePlayerKey(userId), key, JSON.stringify(value));
  ctx.body = { success: true, data: { key, value, updated_at: updatedAt } };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
