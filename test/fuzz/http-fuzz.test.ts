// Property-based fuzzing of the real HTTP server (test/support/fuzz.ts): 1,600 generated cases
// in the normal run (100,000 in npm run test:long). Never a 5xx, always the envelope, a refused
// request changes nothing, an accepted set stores exactly what was sent.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { runFuzz, type FuzzContext } from '../support/fuzz.js';
import { LogCapture } from '../support/log-capture.js';
import { newWorkspace, testConfig, testRedis } from '../support/service.js';

describe('fuzzing the HTTP API with generated requests', function () {
  this.timeout(120_000);
  let service: RunningService;
  let redis: Redis;
  const logs = new LogCapture();
  const contexts: FuzzContext[] = [];

  before(async () => {
    // All cases come from one address: without a large budget of failed keys, most bad-key
    // cases would stop at the 429 of AUTH_FAILURES_PER_MINUTE (tested on its own).
    const config = testConfig({ RATE_LIMIT_PRO: '1000000000', AUTH_FAILURES_PER_MINUTE: '1000000', LOG_LEVEL: 'debug' });
    service = await startService(config, createLogger(config, logs));
    redis = testRedis();
    for (let i = 0; i < 4; i++) {
      const ws = await newWorkspace(redis, 'pro');
      contexts.push({ baseUrl: service.baseUrl.replace(/\/api\/v1$/, ''), apiKey: ws.apiKey, workspaceId: ws.workspaceId, redis });
    }
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  it('holds every invariant over 1,600 generated requests', async () => {
    const run = await runFuzz(contexts, 1600);
    expect(run.cases).to.equal(1600);
    // The generator reaches the handlers, not only the validators.
    expect(run.statuses[200] ?? 0).to.be.greaterThan(50);
    expect(run.statuses[400] ?? 0).to.be.greaterThan(50);
    for (const ctx of contexts) expect(logs.text).to.not.include(ctx.apiKey);
  });
});
