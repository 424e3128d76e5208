import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

describe('GET /api/v1/ping', () => {
  let service: RunningService;
  let redis: Redis;
  before(async () => {
    service = await startTestService();
    redis = testRedis();
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  it('answers with the workspace of the key, at the top level', async () => {
    const ws = await newWorkspace(redis, 'pro', 'Ping Studio');
    const res = await call(service, 'GET', '/ping', { key: ws.apiKey });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, workspaceId: ws.workspaceId, workspaceName: 'Ping Studio', plan: 'pro' });
  });

  it('is 401 without a key, with an unknown key, and with a malformed key', async () => {
    for (const key of [undefined, 'pds_' + 'x'.repeat(40), 'nonsense']) {
      const res = await call(service, 'GET', '/ping', { key });
      expect(res.status, String(key)).to.equal(401);
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.be.a('string').and.not.be.empty;
    }
  });
});
