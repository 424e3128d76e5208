// References for the leaderboard scenarios: Koa + @koa/router taking the same three requests
// and giving the same answers, each with one Redis command on a bare sorted set (member = user
// id) of the same entries: the top page with ZRANGE ... REV WITHSCORES, a rank with ZREVRANK
// and ZSCORE (sent together, one round trip), an increment with ZINCRBY. No key check, limit,
// validation, tie-break or period.
import { bodyParser } from '@koa/bodyparser';
import Router from '@koa/router';
import Koa from 'koa';
import { createServer } from 'node:http';
import { listenFromEnv, referenceRedis, REFERENCE_BOARD_KEY } from './listen.js';

const redis = referenceRedis();
const app = new Koa();
const router = new Router({ prefix: '/api/v1' });

router.get('/leaderboards/:board', async (ctx) => {
  const limit = Number(ctx.query['limit'] ?? 10);
  const flat = await redis.zrange(REFERENCE_BOARD_KEY, '0', String(limit - 1), 'REV', 'WITHSCORES');
  const entries = [];
  for (let i = 0; i < flat.length; i += 2) entries.push({ rank: i / 2 + 1, userId: flat[i], score: Number(flat[i + 1]) });
  ctx.body = { success: true, data: { entries, next: null } };
});

router.get('/leaderboards/:board/players/:userId', async (ctx) => {
  const userId = ctx.params['userId']!;
  const [rank, score] = await Promise.all([redis.zrevrank(REFERENCE_BOARD_KEY, userId), redis.zscore(REFERENCE_BOARD_KEY, userId)]);
  ctx.body = { success: true, data: { userId, rank: Number(rank) + 1, score: Number(score) } };
});

router.post('/leaderboards/:board/increment', bodyParser({ enableTypes: ['json'] }), async (ctx) => {
  const { userId, amount } = ctx.request.body as { userId: string; amount: number };
  const score = await redis.zincrby(REFERENCE_BOARD_KEY, amount, userId);
  ctx.body = { success: true, data: { userId, score: Number(score), scores: { all: Number(score) } } };
});

app.use(router.routes());
listenFromEnv(createServer(app.callback()));
