import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

describe('lua/rate-limit.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  const lease = (ws: string, { limit = 3, windowMs = 10_000, need = 1, extra = 0 } = {}) =>
    redis.rateLimit(keys.rateLimit(ws), String(limit), String(windowMs), String(need), String(extra));

  it('grants what is needed and starts a window whose TTL is set by the first lease', async () => {
    const ws = randomId('ws');
    expect(await lease(ws)).to.deep.equal([1, 1, 10_000]);
    const [granted, count, ttl] = await lease(ws, { need: 2 });
    expect([granted, count]).to.deep.equal([2, 3]);
    expect(ttl).to.be.within(1, 10_000);
    expect(await redis.pttl(keys.rateLimit(ws))).to.be.within(1, 10_000);
  });

  it('never grants past the limit: a partial grant, then nothing, and the counter stops', async () => {
    const ws = randomId('ws');
    expect((await lease(ws, { limit: 5, need: 4 })).slice(0, 2)).to.deep.equal([4, 4]);
    expect((await lease(ws, { limit: 5, need: 3 })).slice(0, 2)).to.deep.equal([1, 5]);
    const [granted, count, ttl] = await lease(ws, { limit: 5, need: 1, extra: 10 });
    expect([granted, count]).to.deep.equal([0, 5]);
    expect(ttl).to.be.within(1, 10_000);
    expect(await redis.get(keys.rateLimit(ws))).to.equal('5');
  });

  it('grants requests ahead of time only out of a quarter of what is left after the need', async () => {
    const ws = randomId('ws');
    // 100 left: need 1, then at most floor(99 / 4) = 24 ahead.
    expect((await lease(ws, { limit: 100, need: 1, extra: 50 })).slice(0, 2)).to.deep.equal([25, 25]);
    // 75 left: the 8 asked for fit in floor(74 / 4) = 18.
    expect((await lease(ws, { limit: 100, need: 1, extra: 8 })).slice(0, 2)).to.deep.equal([9, 34]);
    await redis.set(keys.rateLimit(ws), '96', 'KEEPTTL');
    // 4 left: need 1, floor(3 / 4) = 0 ahead: near the limit each request is counted as it comes.
    expect((await lease(ws, { limit: 100, need: 1, extra: 8 })).slice(0, 2)).to.deep.equal([1, 97]);
  });

  it('starts a new window when the previous one expires', async () => {
    const ws = randomId('ws');
    await lease(ws, { windowMs: 150, need: 3 });
    expect((await lease(ws, { windowMs: 150 }))[0]).to.equal(0);
    await new Promise((r) => setTimeout(r, 250));
    expect(await lease(ws, { windowMs: 150 })).to.deep.equal([1, 1, 150]);
  });

  it('repairs a counter that lost its TTL instead of blocking for ever', async () => {
    const ws = randomId('ws');
    await redis.set(keys.rateLimit(ws), '99');
    expect(await lease(ws, { limit: 3, windowMs: 5000 })).to.deep.equal([0, 99, 5000]);
    expect(await redis.pttl(keys.rateLimit(ws))).to.be.within(1, 5000);
    const other = randomId('ws');
    await redis.set(keys.rateLimit(other), '1');
    expect(await lease(other, { limit: 3, windowMs: 5000 })).to.deep.equal([1, 2, 5000]);
    expect(await redis.pttl(keys.rateLimit(other))).to.be.within(1, 5000);
  });
});

describe('lua/usage-add.lua', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('counts charged requests (answered during a failover) whatever the limit, before granting, and starts a window with them', async () => {
    const ws = randomId('ws');
    const charge = (charged: number, need = 1) =>
      redis.rateLimit(keys.rateLimit(ws), '10', '10000', String(need), '0', String(charged));
    // A window that a charge opens gets its TTL.
    expect(await charge(4)).to.deep.equal([1, 5, 10_000]);
    expect(await redis.pttl(keys.rateLimit(ws))).to.be.within(1, 10_000);
    // Past the limit: counted all the same, nothing granted.
    const [granted, count] = await charge(8, 3);
    expect([granted, count]).to.deep.equal([0, 13]);
    expect(await redis.get(keys.rateLimit(ws))).to.equal('13');
  });

  it('adds requests and 429s to the day, and keeps the day for the retention period', async () => {
    const usage = keys.usage(randomId('ws'), '20260101');
    expect(await redis.usageAdd(usage, '5', '0', '2678400')).to.equal(5);
    expect(await redis.usageAdd(usage, '3', '2', '2678400')).to.equal(8);
    expect(await redis.hgetall(usage)).to.deep.equal({ requests: '8', limited: '2' });
    expect(await redis.ttl(usage)).to.be.within(2_678_000, 2_678_400);
  });

  it('touches keys of the workspace\'s cluster slot, the one its window counter uses', () => {
    const ws = randomId('ws');
    const tag = (k: string) => k.slice(k.indexOf('{') + 1, k.indexOf('}'));
    expect(tag(keys.rateLimit(ws))).to.equal(tag(keys.usage(ws, '20260101')));
  });
});
