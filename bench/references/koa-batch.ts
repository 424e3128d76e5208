// Reference for the 20-key batch (issue 28's target): Koa + @koa/router taking the batch's
// request as the service takes it (its body reader and its ajv schema, service-request.ts),
// one HSET of the same fields (each value JSON-encoded), and the batch's answer (each value
// echoed with its updated_at). No key check, limit, version, history or script.
import Router from '@koa/router';
import { createServer } from 'node:http';
import { batchBody } from '../../src/schemas/data.js';
import type { AppState } from '../../src/http/state.js';
import { listenFromEnv, referenceRedis } from './listen.js';
import { compile, readBody, referenceApp, referencePlayerKey } from './service-request.js';

const validateBatch = compile<{ userId: string | number; ops: Array<{ op: string; key: string; value?: unknown }> }>(batchBody);
const redis = referenceRedis();
const app = referenceApp();
const router = new Router<AppState>({ prefix: '/api/v1' });
router.post('/data/batch', readBody, async (ctx) => {
  const { userId, ops } = validateBatch('body', ctx.request.body);
  const fields: string[] = [];
  for (const op of ops) fields.push(op.key, JSON.stringify(op.value));
  const updatedAt = new Date().toISOString();
  await redis.hset(referencePlayerKey(userId), ...fields);
  ctx.body = { success: true, data: { results: ops.map((op) => ({ key: op.key, value: op.value, updated_at: updatedAt })) } };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
