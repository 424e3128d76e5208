// The admin API's failure limit per address: wrong bearer tokens are counted (in Redis, shared
// by every instance) and judged in one atomic step, so concurrent guesses cannot run past
// ADMIN_AUTH_FAILURES; past it the address gets 429 with Retry-After, even with the right token,
// until the window ends. A missing token is no guess and is not counted.
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { fetchFrom, randomLoopback } from '../support/from-address.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { startTestService, testRedis } from '../support/service.js';

describe('admin API: failure limit on the bearer token', () => {
  let proxy: RedisProxy;
  let service: RunningService;
  let redis: ReturnType<typeof testRedis>;
  before(async () => {
    redis = testRedis();
    // Through a proxy that can hold Redis's replies, as a Redis a network away has them.
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({ REDIS_URL: proxy.url, ADMIN_TOKEN, ADMIN_AUTH_FAILURES: '5', ADMIN_AUTH_WINDOW_SECONDS: '120' });
  });
  after(async () => {
    proxy.release();
    await service.close();
    await proxy.close();
    redis.disconnect();
  });

  const list = (from: string, token?: string) =>
    fetchFrom(from, `${service.opsUrl}/admin/v1/workspaces`, 'GET', token === undefined ? {} : { authorization: `Bearer ${token}` });

  it('answers at most ADMIN_AUTH_FAILURES of 100 concurrent wrong tokens with 401, the rest and then the right token with 429', async () => {
    const from = randomLoopback();
    proxy.reset();
    proxy.hold();
    const pending = Promise.all(Array.from({ length: 100 }, (_, i) => list(from, `wrong-admin-token-${i}`)));
    for (let i = 0; (proxy.sent().match(/admin:fail:/g) ?? []).length < 100; i++) {
      expect(i, 'every request reaches Redis').to.be.lessThan(2000);
      await new Promise((r) => setTimeout(r, 5));
    }
    proxy.release();
    const answers = await pending;
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401), statuses.join(' ')).to.have.length(5);
    expect(statuses.filter((s) => s === 429)).to.have.length(95);
    const limited = answers.find((a) => a.status === 429)!;
    expect(limited.body).to.include({ success: false, code: 'RATE_LIMITED' });
    expect(limited.body.error).to.match(/ADMIN_AUTH_FAILURES/);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 120);

    const right = await list(from, ADMIN_TOKEN);
    expect([right.status, right.body.code]).to.deep.equal([429, 'RATE_LIMITED']);
    expect(await redis.pttl(keys.adminAuthFailures(from))).to.be.within(1, 120_000);
    expect((await list(randomLoopback(), ADMIN_TOKEN)).status, 'another address').to.equal(200);
  });

  it('tells how many tries are left, and counts neither a missing token nor the right one', async () => {
    const from = randomLoopback();
    const wrong = await list(from, 'not-the-admin-token');
    expect([wrong.status, wrong.body.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    expect(wrong.body.error).to.match(/4 tries left/);
    for (let i = 0; i < 10; i++) expect((await list(from)).status).to.equal(401);
    for (let i = 0; i < 10; i++) expect((await list(from, ADMIN_TOKEN)).status).to.equal(200);
    expect(await redis.get(keys.adminAuthFailures(from))).to.equal('1');
  });
});
