// Shutdown of the real entry point (src/main.ts) as a child process: on SIGTERM /readyz turns
// 503 for SHUTDOWN_DRAIN_MS while the API still answers, then the process stops and exits 0.
import { createServer } from 'node:net';
import { expect } from 'chai';
import { spawnService } from './support/child-service.js';
import { testRedisUrl } from './support/hooks.js';
import { newWorkspace, testRedis } from './support/service.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('main: shutdown drain', function () {
  this.timeout(60_000);

  it('on SIGTERM, /readyz answers 503 while /api/v1/ping still answers, then the process exits 0', async () => {
    const redis = testRedis();
    const { apiKey } = await newWorkspace(redis);
    redis.disconnect();
    const opsPort = await freePort();
    const service = await spawnService({ REDIS_URL: testRedisUrl(), ADMIN_PORT: String(opsPort), SHUTDOWN_DRAIN_MS: '3000' });
    const readyz = `http://127.0.0.1:${opsPort}/readyz`;
    const ping = () => fetch(`${service.baseUrl}/ping`, { headers: { 'x-api-key': apiKey } });
    expect((await fetch(readyz)).status).to.equal(200);

    const signalled = Date.now();
    service.process.kill('SIGTERM');
    let ready = await fetch(readyz);
    while (ready.status === 200 && Date.now() - signalled < 2000) {
      await ready.arrayBuffer();
      await new Promise((r) => setTimeout(r, 50));
      ready = await fetch(readyz);
    }
    expect(ready.status).to.equal(503);
    expect((await ready.json()).error).to.include('shutting down');
    // Still serving: the load balancer has not taken the instance out yet.
    const during = await ping();
    expect(during.status).to.equal(200);
    expect((await during.json()).success).to.equal(true);

    const { code, signal } = await service.exited;
    expect({ code, signal }).to.deep.equal({ code: 0, signal: null });
    expect(Date.now() - signalled).to.be.at.least(3000);
    expect(service.logs.some((line) => line.includes('/readyz answers 503, still serving'))).to.equal(true);
    expect(service.logs.some((line) => line.includes('"stopped"'))).to.equal(true);
  });
});
