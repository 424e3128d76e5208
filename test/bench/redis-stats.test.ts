// The bench's view of Redis: a pass waits for an AOF rewrite to end before it starts and after
// it ends, and the rewrite's CPU (its child process) and count go to the pass that started it.
// Runs against a redis-server of its own, since it asks for rewrites.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { delta, persistenceIdle, snapshot } from '../../bench/lib/redis-stats.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';

describe('bench/lib/redis-stats', function () {
  this.timeout(60_000);
  let dataDir: string;
  let server: LocalRedis;
  let redis: Redis;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-test-redis-stats-'));
    server = await startLocalRedis({ dataDir });
    redis = new Redis(server.url);
    // Enough data that the rewrite's child works for a measurable time.
    const value = 'v'.repeat(200);
    for (let batch = 0; batch < 20; batch++) {
      const pipeline = redis.pipeline();
      for (let i = 0; i < 10_000; i++) pipeline.set(`k:${batch}:${i}`, `${value}${i}`);
      await pipeline.exec();
    }
  });

  after(async () => {
    redis.disconnect();
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('waits for a rewrite to end, and counts it and its child CPU in the delta', async () => {
    await persistenceIdle(redis);
    const before = await snapshot(redis);
    await redis.bgrewriteaof();
    // The rewrite is under way when the command answers: the wait below has something to wait for.
    expect(await redis.info('persistence')).to.match(/^aof_rewrite_in_progress:1/m);

    await persistenceIdle(redis);
    expect(await redis.info('persistence')).to.match(/^aof_rewrite_in_progress:0/m);
    const after = await snapshot(redis);
    const d = delta(before, after);
    expect(d.aofRewrites).to.equal(1);
    const cpu = await redis.info('cpu');
    const children = ['used_cpu_user_children', 'used_cpu_sys_children']
      .map((name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(cpu)?.[1]))
      .reduce((a, b) => a + b, 0);
    // The child's CPU is in the snapshot's total, and it was reaped by the time the wait ended.
    expect(children).to.be.greaterThan(0);
    expect(after.cpuSeconds).to.be.at.least(children);
  });

  it('gives up after its timeout while a rewrite runs, and says so', async () => {
    await redis.bgrewriteaof();
    let error: unknown;
    try {
      await persistenceIdle(redis, 0);
    } catch (err) {
      error = err;
    }
    expect(String(error)).to.match(/still rewriting its AOF after 0 ms/);
    await persistenceIdle(redis);
  });
});
