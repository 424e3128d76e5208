// src/store/redis/paced-writes.ts on a real Redis: the two periodic flushes write every workspace of
// a large batch, with at most FLUSH_CONCURRENCY script calls awaiting Redis at any time.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { KeyUsageStore } from '../../../src/store/workspaces/key-usage.js';
import { keys } from '../../../src/store/keys.js';
import { FLUSH_CONCURRENCY } from '../../../src/store/redis/paced-writes.js';
import { preloadScripts } from '../../../src/store/redis/scripts.js';
import { UsageCounter, usageDay } from '../../../src/store/workspaces/usage-counter.js';
import { randomId } from '../../support/random.js';
import { testRedis } from '../../support/service.js';

/** Follows the commands of one client that await their replies; keeps the highest count seen. */
function trackInFlight(client: Redis): { readonly max: number; readonly sent: number } {
  const target = client as unknown as { sendCommand: (...args: unknown[]) => Promise<unknown> };
  const send = target.sendCommand.bind(client);
  const seen = { max: 0, sent: 0, now: 0 };
  target.sendCommand = (...args) => {
    seen.sent++;
    seen.max = Math.max(seen.max, ++seen.now);
    const reply = send(...args);
    const done = () => {
      seen.now--;
    };
    reply.then(done, done);
    return reply;
  };
  return seen;
}

describe('paced flushes (store/redis/paced-writes.ts)', () => {
  const WORKSPACES = FLUSH_CONCURRENCY * 6 + 5;
  let redis: Redis;
  let observer: Redis;
  const written: string[] = [];
  beforeEach(async () => {
    redis = testRedis();
    // Loaded beforehand, so no call falls back from EVALSHA to EVAL and each is sent once.
    await preloadScripts(redis);
  });
  afterEach(() => redis.disconnect());
  before(() => {
    observer = testRedis();
  });
  after(async () => {
    if (written.length > 0) await observer.del(...written);
    observer.disconnect();
  });

  it(`writes the usage of ${WORKSPACES} workspaces with at most ${FLUSH_CONCURRENCY} calls in flight`, async () => {
    const usage = new UsageCounter(redis);
    const now = Date.UTC(2026, 10, 23, 12);
    const ids = Array.from({ length: WORKSPACES }, () => randomId('ws'));
    ids.forEach((id, i) => {
      for (let n = 0; n <= i % 3; n++) usage.count(id, now, false);
    });
    const calls = trackInFlight(redis);
    await usage.flush();
    expect(calls.sent).to.equal(WORKSPACES);
    expect(calls.max).to.equal(FLUSH_CONCURRENCY);
    for (const [i, id] of ids.entries()) {
      const key = keys.usage(id, usageDay(now));
      written.push(key);
      expect(await observer.hget(key, 'requests')).to.equal(String((i % 3) + 1));
    }
  });

  it(`records the last use of keys in ${WORKSPACES} workspaces with at most ${FLUSH_CONCURRENCY} calls in flight`, async () => {
    const store = new KeyUsageStore(redis);
    const ids = Array.from({ length: WORKSPACES }, () => randomId('ws'));
    // touch-keys writes only for a workspace that exists: its metadata hash.
    for (const id of ids) {
      await observer.hset(keys.workspace(id), 'name', 'paced');
      written.push(keys.workspace(id), keys.keyLastUsed(id));
    }
    const calls = trackInFlight(redis);
    await store.record(new Map(ids.map((id, i) => [id, ['key-a', String(1000 + i)]])));
    expect(calls.sent).to.equal(WORKSPACES);
    expect(calls.max).to.equal(FLUSH_CONCURRENCY);
    for (const [i, id] of ids.entries()) {
      expect(await observer.hget(keys.keyLastUsed(id), 'key-a')).to.equal(String(1000 + i));
    }
  });
});
