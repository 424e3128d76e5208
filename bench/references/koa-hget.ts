// Reference: Koa + @koa/router with one HGET per request, the least work any Koa service
// that reads Redis can do: the ceiling for our own service. It reads what the service reads for
// the same request (the API key's workspace, the query's player and key: referenceKey).
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import { listenFromEnv, referenceKey, referenceRedis, REFERENCE_FIELD } from './listen.js';

const redis = referenceRedis();
const app = new Koa();
const router = new Router({ prefix: '/api/v1' });
router.get('/data', async (ctx) => {
  const { userId, key } = ctx.query;
  const hash = referenceKey(ctx.get('x-api-key') || undefined, typeof userId === 'string' ? userId : undefined);
  ctx.body = { success: true, data: await redis.hget(hash, typeof key === 'string' ? key : REFERENCE_FIELD) };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
