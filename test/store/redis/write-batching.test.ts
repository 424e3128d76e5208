// src/store/redis/write-batching.ts on a real Redis: the commands of one turn leave in one socket
// write and reach Redis together, each reply goes to its own command, and what passes a
// stream of its own (MULTI) or needs a fallback (a script not yet loaded) still works.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createRedis } from '../../../src/store/redis/redis.js';
import { testRedisUrl } from '../../support/hooks.js';
import { countWrites } from '../../support/socket-writes.js';

const reads = async (observer: Redis) => Number(/total_reads_processed:(\d+)/.exec(await observer.info('stats'))![1]);

describe('write batching (store/redis/write-batching.ts)', () => {
  const prefix = `test:write-batching:${process.pid}:`;
  let observer: Redis;
  before(() => {
    observer = new Redis(testRedisUrl());
  });
  after(async () => {
    const written = await observer.keys(`${prefix}*`);
    if (written.length > 0) await observer.del(...written);
    observer.disconnect();
  });

  /** Runs `use` with a service client on the test Redis, then closes the client. */
  async function withClient(autoPipelining: boolean, use: (redis: Redis) => Promise<void>): Promise<void> {
    const redis = createRedis({ url: testRedisUrl(), commandTimeoutMs: 5000, connectTimeoutMs: 5000, autoPipelining }) as Redis;
    await redis.connect();
    try {
      await use(redis);
    } finally {
      redis.disconnect();
    }
  }

  const fifty = (redis: Redis) =>
    Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? redis.set(`${prefix}${i}`, String(i)) : redis.get(`${prefix}${i - 1}`))));

  it('writes the 50 commands of one turn with one socket write, and Redis reads them together', () =>
    withClient(true, async (redis) => {
      const writes = countWrites(redis);
      const before = await reads(observer);
      const replies = await fifty(redis);
      const after = await reads(observer);
      expect(writes.count).to.equal(1);
      // The 50 commands, and the observer's INFO: a few reads, not fifty.
      expect(after - before).to.be.at.most(4);
      replies.forEach((reply, i) => expect(reply).to.equal(i % 2 === 0 ? 'OK' : String(i - 1)));
      // The socket is uncorked at the turn's end: the next turn's command leaves on its own.
      expect(await redis.get(`${prefix}0`)).to.equal('0');
      expect(writes.count).to.equal(2);
    }));

  it('is what REDIS_AUTO_PIPELINING=false turns off: one write per command', () =>
    withClient(false, async (redis) => {
      const writes = countWrites(redis);
      await fifty(redis);
      expect(writes.count).to.equal(50);
    }));

  it('keeps a MULTI whole and in order, and loads a script on first use, amid other commands', () =>
    withClient(true, async (redis) => {
      const key = `${prefix}multi`;
      const usageKey = `${prefix}usage`;
      const [multi, first, second, plain] = await Promise.all([
        redis.multi().set(key, 'a').append(key, 'b').get(key).exec(),
        // usage-add.lua: an EVALSHA that falls back to EVAL on a connection new to the script.
        redis.usageAdd(usageKey, '2', '0', '60'),
        redis.usageAdd(usageKey, '3', '1', '60'),
        redis.get(key),
      ]);
      expect(multi).to.deep.equal([
        [null, 'OK'],
        [null, 2],
        [null, 'ab'],
      ]);
      expect([first, second]).to.deep.equal([2, 5]);
      expect(plain).to.equal('ab');
      expect(await observer.hgetall(usageKey)).to.deep.equal({ requests: '5', limited: '1' });
    }));
});
