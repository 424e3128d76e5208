// Reference for the set scenario: Koa + @koa/router + @koa/bodyparser taking the same request
// (a JSON body with a 1 KB value), one HSET of the JSON-encoded value, and the same answer
// (the value echoed with its updated_at). No key check, limit, validation or script: the
// least a Koa service must do for this request. The targets stay ratios to Koa + one HGET;
// this row shows how much of set's distance to them is the request's own I/O.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import { listenFromEnv, referenceRedis, REFERENCE_KEY } from './listen.js';

const redis = referenceRedis();
const app = new Koa();
const router = new Router({ prefix: '/api/v1' });
router.post('/data/set', bodyParser({ enableTypes: ['json'] }), async (ctx) => {
  const { key, value } = ctx.request.body as { key: string; value: unknown };
  const updatedAt = new Date().toISOString();
  await redis.hset(REFERENCE_KEY, key, JSON.stringify(value));
  ctx.body = { success: true, data: { key, value, updated_at: updatedAt } };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
