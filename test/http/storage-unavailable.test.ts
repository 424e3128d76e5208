// Redis down: every request answers 503 "Storage unavailable" within about a second, and the
// service recovers by itself when Redis returns. Uses a private redis-server it can stop.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { call, fetchRecorded, newWorkspace, startTestService } from '../support/service.js';

describe('when Redis is unavailable', () => {
  let dataDir: string;
  let redisServer: LocalRedis;
  let service: RunningService;
  let apiKey: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pds-unavailable-'));
    redisServer = await startLocalRedis({ dataDir });
    service = await startTestService({ REDIS_URL: redisServer.url });
    const admin = new Redis(redisServer.url);
    apiKey = (await newWorkspace(admin)).apiKey;
    admin.disconnect();
  });
  after(async () => {
    await service.close();
    await redisServer.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 within about a second, then recovers without a restart', async () => {
    expect((await call(service, 'GET', '/ping', { key: apiKey })).status).to.equal(200);
    const port = redisServer.port;
    await redisServer.stop();

    for (const [method, path, body] of [
      ['GET', '/ping', undefined],
      ['GET', '/data?userId=1', undefined],
      ['POST', '/data/set', { userId: 1, key: 'k', value: 1 }],
      ['POST', '/data/increment', { userId: 1, key: 'k' }],
    ] as const) {
      const started = Date.now();
      const res = await call(service, method, path, { key: apiKey, body });
      const took = Date.now() - started;
      expect(res.status, path).to.equal(503);
      expect(res.body).to.deep.equal({ success: false, error: 'Storage unavailable', code: 'STORAGE_UNAVAILABLE' });
      expect(res.headers.get('retry-after'), path).to.equal('1');
      expect(took, `${path} took ${took} ms`).to.be.below(1500);
    }

    const ready = await fetchRecorded(`${service.opsUrl}/readyz`, 'GET', {}, undefined);
    expect(ready.status).to.equal(503);
    expect(ready.headers.get('retry-after')).to.equal('1');

    redisServer = await startLocalRedis({ dataDir, port });
    const deadline = Date.now() + 5000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await call(service, 'GET', '/ping', { key: apiKey })).status;
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).to.equal(200);
    expect((await call(service, 'POST', '/data/increment', { key: apiKey, body: { userId: 1, key: 'n' } })).body.value).to.equal(1);
  });
});
