// Reference for the increment scenario (issue 28's target): Koa + @koa/router taking
// increment's request as the service takes it (its body reader and its ajv schema,
// service-request.ts), one HINCRBY, and increment's answer (the new value). No key check,
// limit, version, history or script. HINCRBY takes whole amounts only, as the bench sends.
import Router from '@koa/router';
import { createServer } from 'node:http';
import { incrementBody } from '../../src/schemas/data.js';
import type { AppState } from '../../src/http/state.js';
import { listenFromEnv, referenceRedis } from './listen.js';
import { compile, readBody, referenceApp, referencePlayerKey } from './service-request.js';

const validateIncrement = compile<{ userId: string | number; key: string; amount?: number }>(incrementBody);
const redis = referenceRedis();
const app = referenceApp();
const router = new Router<AppState>({ prefix: '/api/v1' });
router.post('/data/increment', readBody, async (ctx) => {
  const { userId, key, amount } = validateIncrement('body', ctx.request.body);
  const value = await redis.hincrby(referencePlayerKey(userId), key, amount ?? 1);
  ctx.body = { success: true, value };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
