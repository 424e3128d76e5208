import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { loadConfig } from '../../../src/config.js';
import { keys } from '../../../src/store/keys.js';
import { call, newWorkspace, startTestService, testRedis } from '../../support/service.js';

describe('REDIS_AUTO_PIPELINING', () => {
  it('is on by default, takes true or false, and names the variable when invalid', () => {
    expect(loadConfig({}).redis.autoPipelining).to.equal(true);
    expect(loadConfig({ REDIS_AUTO_PIPELINING: 'false' }).redis.autoPipelining).to.equal(false);
    expect(() => loadConfig({ REDIS_AUTO_PIPELINING: 'off' })).to.throw(/REDIS_AUTO_PIPELINING/);
  });

  it('when off, the service still reads alongside the limiter and writes after it', async () => {
    const service = await startTestService({ REDIS_AUTO_PIPELINING: 'false' });
    const redis: Redis = testRedis();
    try {
      const ws = await newWorkspace(redis);
      const set = await call(service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 7, key: 'coins', value: 3 } });
      expect(set.status).to.equal(200);
      const get = await call(service, 'GET', '/data?userId=7&key=coins', { key: ws.apiKey });
      expect(get.status).to.equal(200);
      expect(get.body.data.value).to.equal(3);
      expect(await redis.hexists(keys.player(ws.workspaceId, '7'), 'coins')).to.equal(1);
    } finally {
      await service.close();
      redis.disconnect();
    }
  });
});
