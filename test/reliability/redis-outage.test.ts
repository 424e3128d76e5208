// Redis down, paused or slow: every request answers 503 "Storage unavailable" within about a
// second (bounded command timeouts, no offline queue), /readyz says not ready, and the service
// recovers by itself when Redis is back, with no restart. Runs against a redis-server of its
// own, since it kills and pauses it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { call, type ApiResponse } from '../support/service.js';

const DEBUG = ['--enable-debug-command', 'local'];
const UNAVAILABLE = { success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' };

describe('when Redis is down, paused or slow', function () {
  this.timeout(60_000);
  let dataDir: string;
  let redis: LocalRedis;
  let service: RunningService;
  let ws: CreatedWorkspace;

  const requests = (): Array<[string, string, unknown]> => [
    ['GET', '/ping', undefined],
    ['GET', '/data?userId=1&key=coins', undefined],
    ['GET', '/data?userId=1', undefined],
    ['POST', '/data/set', { userId: 1, key: 'coins', value: 5 }],
    ['POST', '/data/increment', { userId: 1, key: 'coins' }],
    ['POST', '/data/delete', { userId: 1, key: 'gone' }],
  ];

  async function timed(method: string, path: string, body: unknown, key = ws.apiKey): Promise<ApiResponse & { ms: number }> {
    const started = Date.now();
    const res = await call(service, method, path, { key, body });
    return { ...res, ms: Date.now() - started };
  }

  async function readyz(): Promise<number> {
    return (await fetch(`${service.opsUrl}/readyz`)).status;
  }

  async function expectAllUnavailable(): Promise<number[]> {
    const answers = await Promise.all(requests().map(([m, p, b]) => timed(m, p, b).then((res) => ({ ...res, write: m === 'POST' }))));
    // A key this instance has never seen must not turn into a 401 either.
    answers.push({ ...(await timed('GET', '/ping', undefined, 'pds_' + 'Z'.repeat(40))), write: false });
    for (const res of answers) {
      expect(res.status, res.text).to.equal(503);
      // A write whose script was sent before Redis stopped answering (its plan's lease and
      // storage total at hand, so nothing else went to Redis first) may have been applied:
      // OUTCOME_UNKNOWN, also a 503 (docs/safe-saves.md). Anything that sent nothing says so.
      if (res.write && res.body.code === 'OUTCOME_UNKNOWN') expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      else expect(res.body).to.deep.equal(UNAVAILABLE);
      expect(res.ms).to.be.below(2500);
    }
    expect(await readyz()).to.equal(503);
    return answers.map((a) => a.ms);
  }

  async function expectRecovered(): Promise<void> {
    const deadline = Date.now() + 15_000;
    while ((await timed('GET', '/ping', undefined)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the service did not recover within 15 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [m, p, b] of requests()) {
      const res = await timed(m, p, b);
      expect(res.status, `${m} ${p}: ${res.text}`).to.be.oneOf([200, 404]);
    }
    expect(await readyz()).to.equal(200);
  }

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-outage-'));
    redis = await startLocalRedis({ dataDir, appendfsync: 'always', extraArgs: DEBUG });
    const config = loadConfig({ REDIS_URL: redis.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'silent' });
    service = await startService(config, createLogger(config));
    const admin = new Redis(redis.url);
    ws = await new AdminOperations(admin).createWorkspace({ name: 'outage', plan: 'pro' });
    admin.disconnect();
  });
  after(async () => {
    await service?.close();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 quickly while Redis is down, and recovers by itself when it is back', async () => {
    expect((await timed('POST', '/data/set', { userId: 1, key: 'kept', value: 'before' })).status).to.equal(200);
    await redis.kill();
    await expectAllUnavailable();
    redis = await startLocalRedis({ dataDir, port: redis.port, appendfsync: 'always', extraArgs: DEBUG });
    await expectRecovered();
    // The AOF brought the data back, and the restarted Redis (empty script cache) runs the scripts.
    expect((await timed('GET', '/data?userId=1&key=kept', undefined)).body.data.value).to.equal('before');
  });

  it('answers 503 within about a second while Redis is paused (SIGSTOP), and recovers on SIGCONT', async () => {
    process.kill(redis.process.pid!, 'SIGSTOP');
    try {
      const ms = await expectAllUnavailable();
      // Bounded by REDIS_COMMAND_TIMEOUT_MS (1000 ms by default), not by the pause.
      expect(Math.min(...ms)).to.be.at.least(900);
    } finally {
      process.kill(redis.process.pid!, 'SIGCONT');
    }
    await expectRecovered();
  });

  it('answers 503 within about a second while Redis is busy (DEBUG SLEEP), then recovers', async () => {
    const blocker = new Redis(redis.url);
    await blocker.ping();
    const sleeping = blocker.call('DEBUG', 'SLEEP', '5');
    await new Promise((r) => setTimeout(r, 50));
    await expectAllUnavailable();
    await sleeping;
    blocker.disconnect();
    await expectRecovered();
  });
});
