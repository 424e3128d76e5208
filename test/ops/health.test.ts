import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { scriptsLoaded } from '../../src/store/redis/scripts.js';
import { call, startTestService, testRedis, type ApiResponse } from '../support/service.js';

/** Polls until `done` holds for the answer, for at most `timeoutMs`. */
async function until(probe: () => Promise<ApiResponse>, done: (res: ApiResponse) => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await probe();
    if (done(res) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('health probes', () => {
  let dataDir: string;
  let redis: LocalRedis;
  let service: RunningService;
  const ops = () => ({ baseUrl: service.opsUrl });

  before(async function () {
    this.timeout(30_000);
    // A private Redis: this test stops it, which the shared test Redis must never be.
    dataDir = mkdtempSync(join(tmpdir(), 'pds-health-'));
    redis = await startLocalRedis({ dataDir });
    service = await startTestService({ REDIS_URL: redis.url });
  });
  after(async () => {
    await service?.close();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('/readyz flips to 503 when Redis goes away and back to 200 when it returns; /healthz stays 200', async function () {
    this.timeout(40_000);
    const admin = testRedis(redis.url);
    const ws = await new AdminOperations(admin).createWorkspace({ name: 'health', plan: 'pro' });
    admin.disconnect();

    expect((await call(ops(), 'GET', '/healthz')).status).to.equal(200);
    const ready = await call(ops(), 'GET', '/readyz');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.deep.equal({ success: true, status: 'ready', redis: { masters: 1, answering: 1, notAnswering: [] } });

    // A Redis that lost its scripts still serves (ioredis sends a script's text on NOSCRIPT):
    // ready, and the probe has loaded them again.
    const flush = testRedis(redis.url);
    await flush.script('FLUSH');
    expect((await call(ops(), 'GET', '/readyz')).status).to.equal(200);
    expect(await scriptsLoaded(flush)).to.equal(true);
    flush.disconnect();

    await redis.stop();
    const down = await until(() => call(ops(), 'GET', '/readyz'), (res) => res.status === 503);
    expect(down.status).to.equal(503);
    expect(down.body.success).to.equal(false);
    expect(down.body.error).to.equal('Not ready: Redis does not answer');
    expect(down.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await call(ops(), 'GET', '/healthz')).status).to.equal(200);
    const refused = await call(service, 'GET', '/ping', { key: ws.apiKey });
    expect(refused.status).to.equal(503);
    expect(refused.body).to.deep.equal({ success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' });

    // The same port and data folder, as a restarted Redis would be: the AOF brings the data back.
    redis = await startLocalRedis({ dataDir, port: redis.port });
    const back = await until(() => call(ops(), 'GET', '/readyz'), (res) => res.status === 200);
    expect(back.status).to.equal(200);
    const ping = await call(service, 'GET', '/ping', { key: ws.apiKey });
    expect(ping.status).to.equal(200);
    expect(ping.body.workspaceId).to.equal(ws.workspaceId);
  });

  it('/readyz answers 503 while draining, with Redis up and requests still served', async () => {
    const admin = testRedis(redis.url);
    const ws = await new AdminOperations(admin).createWorkspace({ name: 'drain', plan: 'pro' });
    admin.disconnect();
    const drain = service.drain(60_000);
    const res = await call(ops(), 'GET', '/readyz');
    expect(res.status).to.equal(503);
    expect(res.body).to.deep.equal({ success: false, error: 'Not ready: shutting down (draining)', code: 'STORAGE_UNAVAILABLE' });
    expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    drain.skip();
    await drain.done;
  });
});
