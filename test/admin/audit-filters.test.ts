// The audit trail filtered by action, actor and time (GET /admin/v1/audit), and a person looking
// at a player audited as player.view, not as an export.
import { expect } from 'chai';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, useService } from '../support/service.js';
import { randomId } from '../support/random.js';

describe('admin API: the audit trail, filtered', function () {
  this.timeout(30_000);
  const h = useService({ ADMIN_TOKEN });

  it('filters by action (exact or a prefix with *), actor and time range, newest first', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `audit-${randomId()}` });
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'u', key: 'k', value: 1 } });
    // Apart by a few ms, so that no entry shares the boundary's millisecond.
    const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
    await pause();
    const start = new Date().toISOString();
    await pause();
    await adminCall(h.service, 'PUT', `/workspaces/${ws.workspaceId}/players/u`, { body: { key: 'k', value: 2 } });
    const viewed = await adminCall(h.service, 'GET', `/workspaces/${ws.workspaceId}/players/u?purpose=view`);
    expect(viewed.status).to.equal(200);
    await adminCall(h.service, 'GET', `/workspaces/${ws.workspaceId}/players/u`);
    const read = async (query: string) => {
      const res = await adminCall(h.service, 'GET', `/audit?workspace=${ws.workspaceId}&${query}`);
      expect(res.status, query).to.equal(200);
      return (res.body.data as Array<{ action: string; actor: string }>).map((e) => e.action);
    };
    expect(await read('action=player.*')).to.deep.equal(['player.export', 'player.view', 'player.set']);
    expect(await read('action=player.view')).to.deep.equal(['player.view']);
    expect(await read('actor=admin-api&action=player.set')).to.deep.equal(['player.set']);
    expect(await read('actor=console')).to.deep.equal([]);
    expect(await read(`since=${encodeURIComponent(start)}`)).to.deep.equal(['player.export', 'player.view', 'player.set']);
    expect(await read(`until=${encodeURIComponent(start)}`)).to.deep.equal(['workspace.create']);
  });

  it('answers a bad time with a 400 in the envelope', async () => {
    for (const query of ['since=yesterday', 'until=2030-13-45', `action=${'x'.repeat(65)}`]) {
      const res = await adminCall(h.service, 'GET', `/audit?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.success).to.equal(false);
    }
  });
});
