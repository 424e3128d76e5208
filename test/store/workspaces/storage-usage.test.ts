// What an instance knows of a workspace's storage total: what Redis last said plus its own
// writes since, including the writes whose flush to Redis is still on its way. Seen through a
// proxy that holds Redis's replies, so the flush is caught in flight.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { readStorageTotals, StorageUsage } from '../../../src/store/workspaces/storage-usage.js';
import { testRedisUrl } from '../../support/hooks.js';
import { startRedisProxy } from '../../support/redis-proxy.js';
import { randomId } from '../../support/random.js';

describe('storage totals of an instance', () => {
  it('counts its own writes while their flush is in flight, and once it has landed, exactly once', async () => {
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const redis = new Redis(proxy.url);
    const direct = new Redis(testRedisUrl());
    const usage = new StorageUsage(redis, 60_000);
    const workspaceId = randomId('ws');
    try {
      expect(await usage.current(workspaceId, Date.now())).to.deep.equal({ bytes: 0, players: 0, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });
      usage.record(workspaceId, 5000, 2);
      expect(usage.current(workspaceId, Date.now())).to.deep.equal({ bytes: 5000, players: 2, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });

      proxy.hold();
      const flushed = usage.flush();
      // The flush has taken the deltas and sent them; Redis's answer is held.
      for (let i = 0; !proxy.sent().includes('HINCRBY') && !proxy.sent().includes('hincrby'); i++) {
        expect(i, 'the flush reaches Redis').to.be.lessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(usage.current(workspaceId, Date.now()), 'while the flush is in flight').to.deep.equal({ bytes: 5000, players: 2, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });
      usage.record(workspaceId, 100, 0);
      expect(usage.current(workspaceId, Date.now())).to.deep.equal({ bytes: 5100, players: 2, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });
      proxy.release();
      await flushed;
      expect(usage.current(workspaceId, Date.now()), 'once it has landed').to.deep.equal({ bytes: 5100, players: 2, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });
      expect(await readStorageTotals(direct, workspaceId)).to.deep.equal({ bytes: 5000, players: 2, historyBytes: 0, boardBytes: 0, keptBytes: 0, messageBytes: 0, sessionBytes: 0 });
    } finally {
      proxy.release();
      redis.disconnect();
      direct.disconnect();
      await proxy.close();
    }
  });

  it('counts a flush in flight once when a refresh reads the totals it has already changed', async () => {
    // The refresh's read is sent after the flush's commands, so Redis's answer to it holds the
    // flush's deltas; until the flush's own answer is in, they must not be added again. (A full
    // test run once refused a leaderboard write one entry early so.)
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const redis = new Redis(proxy.url);
    const usage = new StorageUsage(redis, 20);
    const workspaceId = randomId('ws');
    try {
      expect((await usage.current(workspaceId, Date.now())).bytes).to.equal(0);
      usage.record(workspaceId, 1000, 1);
      proxy.hold();
      const flushed = usage.flush();
      for (let i = 0; !/hincrby/i.test(proxy.sent()); i++) {
        expect(i, 'the flush reaches Redis').to.be.lessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, 40)); // what Redis last said is stale: the next call reads
      const refreshed = usage.current(workspaceId, Date.now());
      expect(refreshed, 'a read was needed').to.be.instanceOf(Promise);
      await new Promise((r) => setTimeout(r, 20));
      proxy.release();
      expect((await refreshed).bytes, 'the refresh read during the flush').to.equal(1000);
      await flushed;
      expect((await usage.current(workspaceId, Date.now())).bytes, 'after both').to.equal(1000);
    } finally {
      proxy.release();
      redis.disconnect();
      await proxy.close();
    }
  });
});
