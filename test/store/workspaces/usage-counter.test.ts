import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../../src/store/keys.js';
import { defineScripts } from '../../../src/store/redis/scripts.js';
import { UsageCounter, usageDay } from '../../../src/store/workspaces/usage-counter.js';
import { Redis as IORedis } from 'ioredis';
import { randomId } from '../../support/random.js';
import { testRedis } from '../../support/service.js';

describe('usageDay', () => {
  it('names the UTC day of any instant, across day boundaries in both directions', () => {
    expect(usageDay(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).to.equal('20260131');
    expect(usageDay(Date.UTC(2026, 1, 1))).to.equal('20260201');
    expect(usageDay(Date.UTC(2026, 0, 31, 12))).to.equal('20260131');
    expect(usageDay(Date.UTC(1999, 11, 31, 1))).to.equal('19991231');
  });
});

describe('UsageCounter', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('adds what it counted in memory, per workspace and day, in one flush', async () => {
    const usage = new UsageCounter(redis);
    const [a, b] = [randomId('ws'), randomId('ws')];
    const lastMs = Date.UTC(2026, 0, 31, 23, 59, 59, 999);
    for (let i = 0; i < 5; i++) usage.count(a, lastMs, i >= 3);
    usage.count(a, lastMs + 1, false);
    usage.count(b, lastMs, true);
    expect(usage.size).to.equal(3);
    await usage.flush();
    expect(usage.size).to.equal(0);
    expect(await redis.hgetall(keys.usage(a, '20260131'))).to.deep.equal({ requests: '5', limited: '2' });
    expect(await redis.hgetall(keys.usage(a, '20260201'))).to.deep.equal({ requests: '1' });
    expect(await redis.hgetall(keys.usage(b, '20260131'))).to.deep.equal({ requests: '1', limited: '1' });
    // A second flush adds to what is there.
    usage.count(a, lastMs, false);
    await usage.flush();
    expect(await redis.hget(keys.usage(a, '20260131'), 'requests')).to.equal('6');
  });

  it('keeps what it could not write for the next flush', async () => {
    // A client on a port nothing listens on: every write fails at once.
    const down = new IORedis({ port: 1, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
    defineScripts(down);
    const usage = new UsageCounter(down);
    const ws = randomId('ws');
    usage.count(ws, Date.now(), false);
    usage.count(ws, Date.now(), true);
    let failed = false;
    await usage.flush().catch(() => {
      failed = true;
    });
    expect(failed).to.equal(true);
    expect(usage.size).to.equal(1);
    down.disconnect();
  });
});
