// When a lease must be taken, a GET's read travels alongside the rate-limit script (one round
// trip) and a write is sent only after the verdict; with a lease in hand, a request sends only
// its own command. Seen through a proxy in front of the real test Redis that holds Redis's
// replies, so the test sees what the service sends before it has any answer.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

/**
 * A service whose Redis connection goes through a proxy that can hold Redis's replies, and a
 * pro workspace whose key is already in the service's cache after `warm` ran.
 */
function useProxiedService(env: Record<string, string>, warm: (t: ProxiedService) => Promise<void>): ProxiedService {
  const t = {} as ProxiedService;
  before(async () => {
    t.redis = testRedis();
    // Made before the service subscribes: the key's creation events (which drop it from the
    // cache) then never reach the service, so the lookup the warm-up caches stays cached.
    t.apiKey = (await newWorkspace(t.redis, 'pro')).apiKey;
    t.proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port || 6379));
    t.service = await startTestService({ REDIS_URL: t.proxy.url, ...env });
    await warm(t);
  });
  after(async () => {
    t.proxy.release();
    await t.service.close();
    await t.proxy.close();
    t.redis.disconnect();
  });
  return t;
}

interface ProxiedService {
  proxy: RedisProxy;
  service: RunningService;
  redis: Redis;
  apiKey: string;
}

describe('rate limit middleware: reads alongside the lease, writes after it', () => {
  // No requests taken ahead of time: every request needs a lease, so each shows the order.
  const t = useProxiedService({ RATE_LIMIT_LEASE_AHEAD: '0' }, async ({ service, apiKey }) => {
    await call(service, 'POST', '/data/set', { key: apiKey, body: { userId: 1, key: 'coins', value: 5 } });
  });

  const withRepliesHeld = async (send: () => Promise<{ status: number; body: any }>) => {
    t.proxy.reset();
    t.proxy.hold();
    const pending = send();
    await new Promise((r) => setTimeout(r, 300));
    const sentBeforeAnyReply = t.proxy.sent().toLowerCase();
    expect(sentBeforeAnyReply, 'the key lookup should come from the cache').to.not.include('hgetall');
    t.proxy.release();
    return { sentBeforeAnyReply, res: await pending };
  };

  it('a GET sends its read together with the limiter script', async () => {
    const { sentBeforeAnyReply, res } = await withRepliesHeld(() =>
      call(t.service, 'GET', '/data?userId=1&key=coins', { key: t.apiKey }),
    );
    expect(sentBeforeAnyReply).to.include('evalsha');
    expect(sentBeforeAnyReply).to.include('hmget');
    expect(res.status).to.equal(200);
    expect(res.body.data.value).to.equal(5);
  });

  it('a write sends only the limiter script until the verdict', async () => {
    const { sentBeforeAnyReply, res } = await withRepliesHeld(() =>
      call(t.service, 'POST', '/data/set', { key: t.apiKey, body: { userId: 1, key: 'coins', value: 6 } }),
    );
    expect(sentBeforeAnyReply.match(/evalsha/g)).to.have.length(1);
    expect(sentBeforeAnyReply).to.include(':rl');
    expect(sentBeforeAnyReply).to.not.include('coins');
    expect(res.status).to.equal(200);
    expect((await call(t.service, 'GET', '/data?userId=1&key=coins', { key: t.apiKey })).body.data.value).to.equal(6);
  });
});

describe('rate limit middleware with a lease in hand', () => {
  // Leases grow with each one taken in a busy workspace (5, then 9 requests): after six, eight are in hand.
  const t = useProxiedService({}, async ({ service, apiKey }) => {
    for (let i = 0; i < 6; i++) await call(service, 'POST', '/data/set', { key: apiKey, body: { userId: 1, key: 'coins', value: i } });
  });

  it('a request sends no limiter command, only its own, and the headers count on', async () => {
    t.proxy.reset();
    const first = await call(t.service, 'GET', '/data?userId=1&key=coins', { key: t.apiKey });
    const second = await call(t.service, 'POST', '/data/set', { key: t.apiKey, body: { userId: 1, key: 'coins', value: 9 } });
    const sent = t.proxy.sent().toLowerCase();
    expect(sent, 'the window counter').to.not.include(':rl');
    expect(sent).to.include('hmget');
    expect(first.status).to.equal(200);
    expect(second.status).to.equal(200);
    expect(Number(first.headers.get('x-ratelimit-remaining'))).to.equal(300 - 7);
    expect(Number(second.headers.get('x-ratelimit-remaining'))).to.equal(300 - 8);
  });
});
