// GET /data/versions and /data/version: the restore points game code reads with a write key,
// newest first, and the whole player at one of them (ProfileStore's profile versions).
import { expect } from 'chai';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { client, newWorkspace, testClock, useService } from '../support/service.js';

describe('GET /data/versions and /data/version', () => {
  const clock = testClock(Date.UTC(2031, 0, 5, 10));
  const t = useService({ ADMIN_TOKEN, HISTORY_INTERVAL_SECONDS: '300' }, { clock: clock.now });
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  it('lists the current version and a restore point per interval written in, newest first, and reads the player at each', async () => {
    await api.post('/data/set', { userId: 1, key: 'coins', value: 1 });
    await api.post('/data/set', { userId: 1, key: 'coins', value: 2 });
    clock.advance(300_000);
    await api.post('/data/batch', { userId: 1, ops: [{ op: 'set', key: 'coins', value: 3 }, { op: 'set', key: 'level', value: 2 }] });
    const list = await api.get('/data/versions?userId=1');
    expect(list.status).to.equal(200);
    const { data } = list.body;
    expect(data.userId).to.equal('1');
    expect(data.version).to.equal(3);
    expect(data.versions.map((v: { version: number }) => v.version)).to.deep.equal([3, 2, 0]);
    expect(data.versions[1]).to.include({ kind: 'batch' });
    expect(data.versions[1].keys).to.have.members(['coins', 'level']);
    expect(data.nextBefore).to.equal(null);

    const at2 = await api.get('/data/version?userId=1&version=2');
    expect(at2.status).to.equal(200);
    expect(at2.body.data).to.include({ userId: '1', version: 2, currentVersion: 3 });
    expect(Object.fromEntries(Object.entries(at2.body.data.data).map(([k, v]) => [k, (v as { value: unknown }).value]))).to.deep.equal({ coins: 2 });
    const at0 = await api.get('/data/version?userId=1&version=0');
    expect(at0.body.data.data).to.deep.equal({});
    // Pages: one at a time.
    const page = await api.get('/data/versions?userId=1&limit=1&before=3');
    expect(page.body.data.versions.map((v: { version: number }) => v.version)).to.deep.equal([2]);
    expect(page.body.data.nextBefore).to.equal(2);
  });

  it('answers 404 for a player never written and a version not kept, 400 for a bad query, 403 for a read key', async () => {
    expect((await api.get('/data/versions?userId=404')).body.code).to.equal('PLAYER_NOT_FOUND');
    await api.post('/data/set', { userId: 2, key: 'k', value: 1 });
    await api.post('/data/set', { userId: 2, key: 'k', value: 2 });
    const missing = await api.get('/data/version?userId=2&version=1');
    expect([missing.status, missing.body.code, missing.body.version]).to.deep.equal([404, 'VERSION_NOT_RETAINED', 2]);
    const future = await api.get('/data/version?userId=2&version=9');
    expect(future.body.error).to.equal('Player is at version 2; version 9 does not exist');
    for (const query of ['userId=2&limit=0', 'userId=2&limit=101', 'userId=2&version=x', 'version=1', 'userId=2&extra=1']) {
      const path = query.includes('version=') ? `/data/version?${query}` : `/data/versions?${query}`;
      const res = await api.get(path);
      expect([res.status, res.body.code], query).to.deep.equal([400, 'INVALID_REQUEST']);
    }
    const created = await adminCall(t.service, 'POST', `/workspaces/${workspaceId}/keys`, { token: ADMIN_TOKEN, body: { scope: 'read' } });
    const reader = client(t.service, created.body.data.apiKey);
    expect((await reader.get('/data/versions?userId=2')).status).to.equal(403);
    expect((await reader.get('/data/version?userId=2&version=2')).status).to.equal(403);
  });
});
