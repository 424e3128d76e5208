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

  const hit = (ws: string, limit = 3, windowMs = 10_000) =>
    redis.rateLimit(keys.rateLimit(ws), keys.usage(ws, '20260101'), String(limit), String(windowMs), '2678400');

  it('counts requests in a window whose TTL is set by the first request', async () => {
    const ws = randomId('ws');
    const [count1, ttl1] = await hit(ws);
    expect(count1).to.equal(1);
    expect(ttl1).to.equal(10_000);
    const [count2, ttl2] = await hit(ws);
    expect(count2).to.equal(2);
    expect(ttl2).to.be.within(1, 10_000);
    const pttl = await redis.pttl(keys.rateLimit(ws));
    expect(pttl).to.be.within(1, 10_000);
  });

  it('keeps counting past the limit, and records requests and refusals in the day usage', async () => {
    const ws = randomId('ws');
    for (let i = 0; i < 5; i++) await hit(ws, 3);
    expect(await redis.get(keys.rateLimit(ws))).to.equal('5');
    expect(await redis.hgetall(keys.usage(ws, '20260101'))).to.deep.equal({ requests: '5', limited: '2' });
    const usageTtl = await redis.ttl(keys.usage(ws, '20260101'));
    expect(usageTtl).to.be.within(2_678_000, 2_678_400);
  });

  it('starts a new window when the previous one expires', async () => {
    const ws = randomId('ws');
    await hit(ws, 3, 150);
    await hit(ws, 3, 150);
    await new Promise((r) => setTimeout(r, 250));
    const [count, ttl] = await hit(ws, 3, 150);
    expect(count).to.equal(1);
    expect(ttl).to.equal(150);
  });

  it('repairs a counter that lost its TTL instead of blocking for ever', async () => {
    const ws = randomId('ws');
    await redis.set(keys.rateLimit(ws), '99');
    const [count, ttl] = await hit(ws, 3, 5000);
    expect(count).to.equal(100);
    expect(ttl).to.equal(5000);
    expect(await redis.pttl(keys.rateLimit(ws))).to.be.within(1, 5000);
  });

  it('touches keys of one cluster slot only', () => {
    const ws = randomId('ws');
    const tag = (k: string) => k.slice(k.indexOf('{') + 1, k.indexOf('}'));
    expect(tag(keys.rateLimit(ws))).to.equal(tag(keys.usage(ws, '20260101')));
  });
});
