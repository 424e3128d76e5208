import { expect } from 'chai';
import { call, newWorkspace, useService } from '../support/service.js';

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
