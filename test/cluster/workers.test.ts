import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { freePort } from '../../src/dev/local-redis.js';
import { testRedisUrl } from '../support/hooks.js';
import { call, newWorkspace, testRedis } from '../support/service.js';

describe('WORKERS', () => {
  it('defaults to 1, takes a count or auto, and names the variable when invalid', () => {
    expect(loadConfig({}).workers).to.equal(1);
    expect(loadConfig({ WORKERS: '3' }).workers).to.equal(3);
    expect(loadConfig({ WORKERS: 'auto' }).workers).to.be.at.least(1);
    for (const bad of ['0', 'two', '-1', '1000']) {
      expect(() => loadConfig({ WORKERS: bad }), bad).to.throw(/WORKERS/);
    }
  });

  describe('with WORKERS=2', function () {
    this.timeout(30_000);
    let redis: Redis;
    before(() => {
      redis = testRedis();
    });
    after(() => redis.disconnect());

    it('serves the shared port from two worker processes and drains them all on SIGTERM', async () => {
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        env: { ...process.env, WORKERS: '2', PORT: String(port), HOST: '127.0.0.1', ADMIN_PORT: '0', REDIS_URL: testRedisUrl(), LOG_LEVEL: 'silent' },
        stdio: 'ignore',
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const service = { baseUrl: `http://127.0.0.1:${port}/api/v1` };
        const ws = await newWorkspace(redis);
        let status = 0;
        for (let i = 0; i < 200 && status !== 200; i++) {
          status = await call(service, 'GET', '/ping', { key: ws.apiKey }).then((r) => r.status, () => 0);
          if (status !== 200) await new Promise((r) => setTimeout(r, 100));
        }
        expect(status).to.equal(200);
        const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/);
        expect(children).to.have.length(2);
        child.kill('SIGTERM');
        expect(await exited).to.equal(0);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});
