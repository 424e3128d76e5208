// The bench's view of Redis: a pass waits for an AOF rewrite to end before it starts and after
// it ends, and the rewrite's CPU (its child process) and count go to the pass that started it.
// Runs against a redis-server of its own, since it asks for rewrites.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { startBenchRedis, type BenchRedis } from '../../bench/lib/bench-redis.js';
import { delta, infoNumber, persistenceIdle, snapshot } from '../../bench/lib/redis-stats.js';

describe('bench/lib/redis-stats', function () {
  this.timeout(60_000);
  let bench: BenchRedis;
  let redis: Redis;

  before(async () => {
    bench = await startBenchRedis('test-redis-stats');
    redis = bench.redis;
    // Enough data that the rewrite's child works for a measurable time.
    const value = 'v'.repeat(200);
    for (let batch = 0; batch < 20; batch++) {
      const pipeline = redis.pipeline();
      for (let i = 0; i < 10_000; i++) pipeline.set(`k:${batch}:${i}`, `${value}${i}`);
      await pipeline.exec();
    }
  });

  after(async () => bench.close());

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
    const children = infoNumber(cpu, 'used_cpu_user_children') + infoNumber(cpu, 'used_cpu_sys_children');
    // The child's CPU is in the snapshot's total, and it was reaped by the time the wait ended.
    expect(children).to.be.greaterThan(0);
    expect(after.cpuSeconds).to.be.at.least(children);
  });

  it('counts script calls and the time Redis spent inside them, and nothing of other commands', async () => {
    const before = await snapshot(redis);
    // A script that works for a measurable time (well over 1 µs, INFO's unit).
    await redis.eval("local n = 0 for i = 1, 200000 do n = n + i end return n", 0);
    await redis.set('not-a-script', '1');
    const d = delta(before, await snapshot(redis));
    expect(d.scripts).to.equal(1);
    expect(d.byCommand).to.include({ eval: 1, set: 1 });
    expect(d.scriptMicros).to.be.greaterThan(100);
    const stats = await redis.info('commandstats');
    expect(d.scriptMicros).to.be.at.most(Number(/^cmdstat_eval:calls=\d+,usec=(\d+)/m.exec(stats)?.[1]));
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
