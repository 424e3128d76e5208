import { expect } from 'chai';
import { testOps } from '../support/admin.js';
import { keys } from '../../src/store/keys.js';
import { call, newWorkspace, startTestService, testRedis, useService } from '../support/service.js';

describe('GET /api/v1/ping', () => {
  const t = useService();

  it('answers with the workspace of the key, at the top level', async () => {
    const ws = await newWorkspace(t.redis, 'pro', 'Ping Studio');
    const res = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, workspaceId: ws.workspaceId, workspaceName: 'Ping Studio', plan: 'pro' });
  });

  it('is 401 without a key, with an unknown key, and with a malformed key', async () => {
    for (const key of [undefined, 'pds_' + 'x'.repeat(40), 'nonsense']) {
      const res = await call(t.service, 'GET', '/ping', { key });
      expect(res.status, String(key)).to.equal(401);
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.be.a('string').and.not.be.empty;
    }
  });
});

describe('GET /api/v1/ping for a workspace deleted after its key was cached', () => {
  it('is 401 KEY_REVOKED while the cache still holds the key, then 401 UNAUTHORIZED once the deletion has reached it', async () => {
    const redis = testRedis();
    // Made before the service subscribes, so that no creation event drops the cached key.
    const ws = await newWorkspace(redis);
    const service = await startTestService();
    try {
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
      // The deletion's last steps (records, then the invalidations) as seen by an instance
      // whose invalidation has not arrived: the record is gone, the key still cached.
      await redis.unlink(keys.workspace(ws.workspaceId));
      const cached = await call(service, 'GET', '/ping', { key: ws.apiKey });
      expect([cached.status, cached.body.code, cached.body.error]).to.deep.equal([401, 'KEY_REVOKED', 'API key has been revoked']);

      await testOps(redis).deleteWorkspace(ws.workspaceId);
      let res = cached;
      for (let i = 0; res.body.code === 'KEY_REVOKED'; i++) {
        expect(i, 'the invalidation reaches the service').to.be.lessThan(200);
        await new Promise((r) => setTimeout(r, 10));
        res = await call(service, 'GET', '/ping', { key: ws.apiKey });
      }
      expect([res.status, res.body.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    } finally {
      await service.close();
      redis.disconnect();
    }
  });
});
