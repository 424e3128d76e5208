// The benchmark-size fuzz run: 100,000 generated requests (test/support/fuzz.ts) against the
// service running as its own process, so client and server do not share one event loop.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { spawnService, type ChildService } from '../test/support/child-service.js';
import { runFuzz, type FuzzContext } from '../test/support/fuzz.js';
import { testRedisUrl } from '../test/support/hooks.js';
import { newWorkspace, testRedis } from '../test/support/service.js';
import { report } from './report.js';

const CASES = Number(process.env['FUZZ_CASES'] ?? 100_000);

describe('fuzzing the HTTP API: the long run', function () {
  this.timeout(600_000);
  let service: ChildService;
  let redis: Redis;
  const contexts: FuzzContext[] = [];

  before(async () => {
    // One address sends every case: a large budget of failed keys keeps the bad-key cases
    // reaching authentication instead of the 429 of AUTH_FAILURES_PER_MINUTE.
    service = await spawnService({ REDIS_URL: testRedisUrl(), RATE_LIMIT_PRO: '1000000000', AUTH_FAILURES_PER_MINUTE: '1000000' });
    redis = testRedis();
    for (let i = 0; i < 8; i++) {
      const ws = await newWorkspace(redis, 'pro');
      contexts.push({ baseUrl: service.baseUrl.replace(/\/api\/v1$/, ''), apiKey: ws.apiKey, workspaceId: ws.workspaceId, redis });
    }
  });
  after(async () => {
    service?.process.kill('SIGTERM');
    await service?.exited;
    redis?.disconnect();
  });

  it(`holds every invariant over ${CASES} generated requests`, async () => {
    const run = await runFuzz(contexts, CASES);
    report('fuzz', { cases: run.cases, seconds: Math.round(run.ms / 100) / 10, perSecond: Math.round(run.cases / (run.ms / 1000)), statuses: run.statuses });
    expect(run.cases).to.be.at.least(CASES);
    expect(service.process.exitCode).to.equal(null);
    expect(service.logs.filter((l) => l.includes('"level":50'))).to.deep.equal([]);
  });
});
