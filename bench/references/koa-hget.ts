// Reference: Koa + @koa/router with one HGET per request, the least work any Koa service
// that reads Redis can do: the ceiling for our own service.
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import { listenFromEnv, referenceRedis, REFERENCE_FIELD, REFERENCE_KEY } from './listen.js';

const redis = referenceRedis();
const app = new Koa();
const router = new Router({ prefix: '/api/v1' });
router.get('/data', async (ctx) => {
  ctx.body = { success: true, data: await redis.hget(REFERENCE_KEY, REFERENCE_FIELD) };
});
app.use(router.routes());
listenFromEnv(createServer(app.callback()));
