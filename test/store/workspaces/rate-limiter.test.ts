import { expect } from 'chai';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRedis, type LocalRedis } from '../../../src/dev/local-redis.js';
import { connectRedis, createRedis, isUnavailableError, type RedisClient } from '../../../src/store/redis/redis.js';
import { keys } from '../../../src/store/keys.js';
import { FIRST_LEASE_AHEAD, RateLimiter, type RateLimitResult } from '../../../src/store/workspaces/rate-limiter.js';
import { usageDay } from '../../../src/store/workspaces/usage-counter.js';
import { randomId } from '../../support/random.js';
import { testRedis } from '../../support/service.js';

/** Calls of the rate-limit script the test Redis has run so far (mocha runs tests one at a time). */
async function leaseCalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  // Each lease runs one GET inside the script; nothing else in these tests calls GET.
  return Number(/cmdstat_get:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

const allowed = (results: RateLimitResult[]) => results.filter((r) => r.allowed).length;

describe('RateLimiter', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  const limiter = (leaseAhead = 32, windowMs = 10_000) => new RateLimiter(redis, { windowMs, leaseAhead, usageFlushMs: 1000, failoverMs: 30_000 });

  it('answers from a lease in hand synchronously, with the remaining count of the whole window', async () => {
    const l = limiter();
    const ws = randomId('ws');
    const seen: RateLimitResult[] = [];
    let synchronous = 0;
    for (let i = 0; i < 40; i++) {
      const verdict = l.hit(ws, 300, Date.now());
      if (!(verdict instanceof Promise)) synchronous++;
      seen.push(await verdict);
    }
    expect(seen.map((r) => r.remaining)).to.deep.equal(Array.from({ length: 40 }, (_, i) => 299 - i));
    // Leases of 5, 9, 17 and 33 requests (FIRST_LEASE_AHEAD 4, doubling): only 4 of the 40 waited for Redis.
    expect(FIRST_LEASE_AHEAD).to.equal(4);
    expect(synchronous).to.equal(36);
    expect(Number(await redis.get(keys.rateLimit(ws)))).to.be.at.least(40);
  });

  it('lets concurrent requests of one workspace share lease calls', async () => {
    const l = limiter();
    const ws = randomId('ws');
    const before = await leaseCalls(redis);
    const results = await Promise.all(Array.from({ length: 50 }, () => l.hit(ws, 300, Date.now())));
    expect(allowed(results)).to.equal(50);
    // The first request's lease leaves at once; the 49 that come while it is under way share
    // the next one.
    expect((await leaseCalls(redis)) - before).to.equal(2);
    expect(new Set(results.map((r) => r.remaining)).size).to.equal(50);
  });

  it('refuses in process once Redis said the budget is spent, and counts usage for every verdict', async () => {
    const l = limiter();
    const ws = randomId('ws');
    const results = await Promise.all(Array.from({ length: 8 }, () => l.hit(ws, 5, Date.now())));
    expect(allowed(results)).to.equal(5);
    const before = await leaseCalls(redis);
    const refused = l.hit(ws, 5, Date.now());
    expect(refused).to.not.be.instanceOf(Promise);
    expect(refused).to.include({ allowed: false, remaining: 0 });
    expect((refused as RateLimitResult).resetMs).to.be.within(1, 10_000);
    expect((await leaseCalls(redis)) - before).to.equal(0);
    await l.stop();
    expect(await redis.hgetall(keys.usage(ws, usageDay(Date.now())))).to.deep.equal({ requests: '9', limited: '4' });
  });

  it('drops its lease when the window ends or the limit changes', async () => {
    const l = limiter(32, 300);
    const ws = randomId('ws');
    for (let i = 0; i < 6; i++) await l.hit(ws, 100, Date.now());
    // A lease is in hand now; a new limit (a plan change) does not use it.
    const changed = await l.hit(ws, 200, Date.now());
    expect(changed.limit).to.equal(200);
    await new Promise((r) => setTimeout(r, 350));
    const fresh = await l.hit(ws, 200, Date.now());
    expect(fresh.remaining).to.equal(199);
    // A new window: the counter started again, and a workspace busy a moment ago still takes
    // requests ahead (it is likely busy again).
    const counter = Number(await redis.get(keys.rateLimit(ws)));
    expect(counter).to.be.within(2, 33);
    expect(await redis.pttl(keys.rateLimit(ws))).to.be.within(1, 300);
  });

  it('several instances together never pass more than the limit; without leases ahead, exactly the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 15 })), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0, 4, 32),
        async (limit, bursts, leaseAhead) => {
          const instances = [limiter(leaseAhead), limiter(leaseAhead), limiter(leaseAhead)];
          const ws = randomId('ws');
          // Bursts of concurrent requests, each on one instance, all bursts under way at once.
          const results = (
            await Promise.all(
              bursts.map(([i, n]) => Promise.all(Array.from({ length: n }, () => instances[i]!.hit(ws, limit, Date.now())))),
            )
          ).flat();
          const total = bursts.reduce((sum, [, n]) => sum + n, 0);
          expect(allowed(results)).to.be.at.most(limit);
          if (leaseAhead === 0) expect(allowed(results)).to.equal(Math.min(limit, total));
          expect(Number(await redis.get(keys.rateLimit(ws)))).to.be.at.most(limit);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('RateLimiter while the window\'s Redis does not answer (RATE_LIMIT_FAILOVER_MS)', () => {
  let dataDir: string;
  let local: LocalRedis;
  let redis: RedisClient;

  before(async function () {
    this.timeout(20_000);
    // A private Redis: the test stops it (SIGSTOP), which the shared test Redis must never be.
    dataDir = mkdtempSync(join(tmpdir(), 'pds-limiter-'));
    local = await startLocalRedis({ dataDir });
    redis = createRedis({ url: local.url, commandTimeoutMs: 200, connectTimeoutMs: 1000 });
    redis.on('error', () => {});
    await connectRedis(redis, 2000);
  });
  after(async () => {
    local?.process.kill('SIGCONT');
    redis?.disconnect();
    await local?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const LIMIT = 30;
  const WINDOW = 60_000;
  const BOUND = 120_000;

  /** `n` verdicts at once; a rejected one becomes its error. */
  const hits = (l: RateLimiter, ws: string, n: number, at: number) =>
    Promise.all(Array.from({ length: n }, () => Promise.resolve(l.hit(ws, LIMIT, at)).catch((err: unknown) => err as Error)));
  const verdicts = (results: Array<RateLimitResult | Error>) => ({
    allowed: results.filter((r) => !(r instanceof Error) && r.allowed).length,
    refused: results.filter((r) => !(r instanceof Error) && !r.allowed).length,
    failed: results.filter((r) => r instanceof Error).length,
  });

  it('answers from its last share of the window (200 up to it, then 429 until the window ends) for the bound, then fails; Redis back, what it answered is charged once', async function () {
    this.timeout(20_000);
    let t = Date.now();
    const l = new RateLimiter(redis, { windowMs: WINDOW, leaseAhead: 0, usageFlushMs: 60_000, failoverMs: BOUND, clock: () => t });
    const ws = randomId('ws');
    const start = t;
    // This instance alone: its share is the whole window. 10 of 30 used.
    expect(verdicts(await hits(l, ws, 10, t))).to.deep.equal({ allowed: 10, refused: 0, failed: 0 });

    local.process.kill('SIGSTOP');
    try {
      t += 1;
      const during = await hits(l, ws, 25, t);
      expect(verdicts(during)).to.deep.equal({ allowed: 20, refused: 5, failed: 0 });
      const refused = during.find((r) => !(r instanceof Error) && !r.allowed) as RateLimitResult;
      expect(refused.resetMs).to.be.within(1, WINDOW);
      // Decided in process now, without waiting for Redis.
      expect(l.hit(ws, LIMIT, t)).to.not.be.instanceOf(Promise);

      // The next window, still without Redis: the share again, no more.
      t = start + WINDOW + 10;
      expect(verdicts(await hits(l, ws, 35, t))).to.deep.equal({ allowed: 30, refused: 5, failed: 0 });

      // Past the bound: the error of Redis, which the API answers 503 STORAGE_UNAVAILABLE.
      t = start + WINDOW + BOUND + 100;
      const past = await hits(l, ws, 3, t);
      expect(verdicts(past)).to.deep.equal({ allowed: 0, refused: 0, failed: 3 });
      expect(isUnavailableError(past[0])).to.equal(true);
      // Every call sent so far has timed out by now (200 ms).
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      local.process.kill('SIGCONT');
    }

    // Redis answers again: the next lease asked now and then charges what was answered without it.
    let back: RateLimitResult | undefined;
    for (let i = 0; i < 50 && back === undefined; i++) {
      t += 300;
      const verdict = await Promise.resolve(l.hit(ws, LIMIT, t)).catch(() => undefined);
      if (verdict) back = verdict;
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(back, 'no verdict from Redis again').to.not.equal(undefined);
    // 10 before, the lease that timed out (run once Redis woke up), then 20 and 30 answered in
    // process, each charged once (some by calls that timed out and ran late): the window in
    // Redis is past its limit, so the workspace is refused until it resets.
    expect(Number(await redis.get(keys.rateLimit(ws)))).to.equal(10 + 1 + 20 + 30);
    expect(await l.hit(ws, LIMIT, t)).to.include({ allowed: false, remaining: 0 });
  });

  it('without a share (no lease of the workspace yet) or with RATE_LIMIT_FAILOVER_MS=0, fails at once', async function () {
    this.timeout(10_000);
    const t = Date.now();
    const none = new RateLimiter(redis, { windowMs: WINDOW, leaseAhead: 0, usageFlushMs: 60_000, failoverMs: BOUND });
    const off = new RateLimiter(redis, { windowMs: WINDOW, leaseAhead: 0, usageFlushMs: 60_000, failoverMs: 0 });
    const ws = randomId('ws');
    expect(verdicts(await hits(off, ws, 5, t))).to.deep.equal({ allowed: 5, refused: 0, failed: 0 });
    local.process.kill('SIGSTOP');
    try {
      expect(verdicts(await hits(none, ws, 3, t))).to.deep.equal({ allowed: 0, refused: 0, failed: 3 });
      expect(verdicts(await hits(off, ws, 3, t))).to.deep.equal({ allowed: 0, refused: 0, failed: 3 });
    } finally {
      local.process.kill('SIGCONT');
    }
  });
});
