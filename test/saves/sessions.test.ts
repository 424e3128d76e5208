// Session locks: acquire, renew, release, steal, expiry, load, and the fencing every write
// applies while a live session holds the player.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { client, newWorkspace, startTestService, useService } from '../support/service.js';

describe('safe saves: session locks', () => {
  const t = useService();
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  /** Makes the live session of a player expire now, as the passing of its lease would. */
  async function expire(userId: string): Promise<void> {
    const hash = keys.player(workspaceId, userId);
    const session = await t.redis.hget(hash, '\0s');
    const [id, , ttl, owner] = session!.split('|');
    await t.redis.hset(hash, '\0s', `${id}|${Date.now() - 1000}|${ttl}|${owner}`);
  }

  it('acquires a player, answers its lease and version, and loads its data in the same request', async () => {
    await api.post('/data/set', { userId: 42, key: 'coins', value: 7 });
    const before = Date.now();
    const res = await api.post('/sessions/acquire', { userId: 42, owner: 'job-A', ttlSeconds: 60, load: true });
    expect(res.status).to.equal(200);
    expect(res.body.version).to.equal(1);
    expect(res.body.data).to.include({ userId: '42', owner: 'job-A' });
    expect(res.body.data.sessionId).to.match(/^ses_[0-9A-Za-z]{22}$/);
    expect(res.body.data.values).to.deep.equal({ coins: 7 });
    const expires = Date.parse(res.body.data.expiresAt);
    expect(expires).to.be.within(before + 59_000, Date.now() + 61_000);
    const fresh = await api.post('/sessions/acquire', { userId: 'new', owner: 'job-A', load: true });
    expect(fresh.body.data.values).to.deep.equal({});
    expect(fresh.body.version).to.equal(0);
    expect(Date.parse(fresh.body.data.expiresAt) - Date.now()).to.be.within(290_000, 301_000);
  });

  it('refuses a second server with SESSION_LOCKED naming the holder, until it steals', async () => {
    const a = await api.post('/sessions/acquire', { userId: 1, owner: 'job-A' });
    const b = await api.post('/sessions/acquire', { userId: 1, owner: 'job-B' });
    expect(b.status).to.equal(409);
    expect(b.body).to.deep.equal({
      success: false,
      code: 'SESSION_LOCKED',
      error: b.body.error,
      version: 0,
      data: { owner: 'job-A', expiresAt: a.body.data.expiresAt },
    });
    const stolen = await api.post('/sessions/acquire', { userId: 1, owner: 'job-B', steal: true });
    expect(stolen.status).to.equal(200);
    expect(stolen.body.data.owner).to.equal('job-B');
    // The old holder is fenced off: its late write never lands, whatever it carries.
    const late = await api.post('/data/set', { userId: 1, key: 'coins', value: 999, sessionId: a.body.data.sessionId });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('SESSION_LOST');
    const renew = await api.post('/sessions/renew', { userId: 1, sessionId: a.body.data.sessionId });
    expect(renew.body.code).to.equal('SESSION_LOST');
    const ok = await api.post('/data/set', { userId: 1, key: 'coins', value: 5, sessionId: stolen.body.data.sessionId });
    expect(ok.body.version).to.equal(1);
    expect((await api.get('/data?userId=1&key=coins')).body.data.value).to.equal(5);
  });

  it('while a session holds a player, a write without its id is SESSION_LOCKED; reads always work', async () => {
    await api.post('/data/set', { userId: 2, key: 'coins', value: 1 });
    const held = await api.post('/sessions/acquire', { userId: 2, owner: 'job-A' });
    for (const [path, body] of [
      ['/data/set', { userId: 2, key: 'coins', value: 2 }],
      ['/data/increment', { userId: 2, key: 'coins' }],
      ['/data/delete', { userId: 2 }],
      ['/data/batch', { userId: 2, ops: [{ op: 'set', key: 'x', value: 1 }] }],
    ] as const) {
      const res = await api.post(path, body);
      expect(res.status, path).to.equal(409);
      expect(res.body.code, path).to.equal('SESSION_LOCKED');
      expect(res.body.data.owner).to.equal('job-A');
    }
    expect((await api.get('/data?userId=2')).body).to.deep.equal({ success: true, data: { coins: 1 }, version: 1 });
    const inc = await api.post('/data/increment', { userId: 2, key: 'coins', sessionId: held.body.data.sessionId });
    expect(inc.body).to.deep.equal({ success: true, value: 2, version: 2 });
  });

  it('lets the next server take an expired session, and fences the expired one', async () => {
    const a = await api.post('/sessions/acquire', { userId: 3, owner: 'job-A' });
    await expire('3');
    // An expired lease holds nothing: writes without a session pass, the old id is refused.
    const old = await api.post('/data/set', { userId: 3, key: 'k', value: 1, sessionId: a.body.data.sessionId });
    expect(old.body.code).to.equal('SESSION_LOST');
    const b = await api.post('/sessions/acquire', { userId: 3, owner: 'job-B' });
    expect(b.status).to.equal(200);
    expect((await api.post('/data/set', { userId: 3, key: 'k', value: 2, sessionId: b.body.data.sessionId })).status).to.equal(200);
  });

  it('renews a lease on each write that carries the session, and on renew; release ends it, idempotently', async () => {
    const a = await api.post('/sessions/acquire', { userId: 4, owner: 'job-A', ttlSeconds: 30 });
    const first = Date.parse(a.body.data.expiresAt);
    await new Promise((r) => setTimeout(r, 20));
    await api.post('/data/set', { userId: 4, key: 'k', value: 1, sessionId: a.body.data.sessionId });
    const raw = await t.redis.hget(keys.player(workspaceId, '4'), '\0s');
    expect(Number(raw!.split('|')[1])).to.be.greaterThan(first);
    const renewed = await api.post('/sessions/renew', { userId: 4, sessionId: a.body.data.sessionId, ttlSeconds: 600 });
    expect(Date.parse(renewed.body.data.expiresAt) - Date.now()).to.be.within(590_000, 601_000);
    expect(renewed.body.data).to.include({ sessionId: a.body.data.sessionId, owner: 'job-A', userId: '4' });

    const released = await api.post('/sessions/release', { userId: 4, sessionId: a.body.data.sessionId });
    expect(released.body).to.deep.equal({ success: true, data: { released: true }, version: 1 });
    const again = await api.post('/sessions/release', { userId: 4, sessionId: a.body.data.sessionId });
    expect(again.body).to.deep.equal({ success: true, data: { released: false }, version: 1 });
    // Released: anyone may write again, and the old id is refused.
    expect((await api.post('/data/set', { userId: 4, key: 'k', value: 2 })).status).to.equal(200);
    expect((await api.post('/data/set', { userId: 4, key: 'k', value: 3, sessionId: a.body.data.sessionId })).body.code).to.equal('SESSION_LOST');
  });

  it('saves and releases in one batch, and renews with an empty batch', async () => {
    const a = await api.post('/sessions/acquire', { userId: 5, owner: 'job-A' });
    const sessionId = a.body.data.sessionId;
    const renewOnly = await api.post('/data/batch', { userId: 5, sessionId, ops: [] });
    // A save under a session carries the messages that arrived for the player (none here).
    expect(renewOnly.body).to.deep.equal({ success: true, data: { results: [], messages: [] }, version: 0 });
    const last = await api.post('/data/batch', { userId: 5, sessionId, release: true, ops: [{ op: 'increment', key: 'coins', amount: 3 }] });
    expect(last.body.version).to.equal(1);
    expect(await t.redis.hexists(keys.player(workspaceId, '5'), '\0s')).to.equal(0);
    expect((await api.post('/sessions/acquire', { userId: 5, owner: 'job-B' })).status).to.equal(200);
  });

  it('gives the same owner a new session, and the old id stops working', async () => {
    const first = await api.post('/sessions/acquire', { userId: 6, owner: 'job-A' });
    const second = await api.post('/sessions/acquire', { userId: 6, owner: 'job-A' });
    expect(second.status).to.equal(200);
    expect(second.body.data.sessionId).to.not.equal(first.body.data.sessionId);
    expect((await api.post('/data/set', { userId: 6, key: 'k', value: 1, sessionId: first.body.data.sessionId })).body.code).to.equal('SESSION_LOST');
  });

  it('validates the session calls', async () => {
    for (const [path, body, field] of [
      ['/sessions/acquire', { userId: 1 }, /Missing field "owner"/],
      ['/sessions/acquire', { userId: 1, owner: 'a', ttlSeconds: 5 }, /ttlSeconds/],
      ['/sessions/acquire', { userId: 1, owner: '' }, /owner/],
      ['/sessions/acquire', { userId: 1, owner: 'a', steal: 'yes' }, /steal/],
      ['/sessions/renew', { userId: 1 }, /sessionId/],
      ['/sessions/release', { userId: 1, sessionId: 'ses with spaces' }, /sessionId/],
    ] as const) {
      const res = await api.post(path, body);
      expect(res.status, path).to.equal(400);
      expect(res.body.error).to.match(field);
    }
  });

  describe('the admin side', () => {
    it('shows and force-releases a player\'s session, audited', async () => {
      const admin = await startTestService({ ADMIN_TOKEN });
      try {
        const ws = await newWorkspace(t.redis);
        const c = client(admin, ws.apiKey);
        const held = await c.post('/sessions/acquire', { userId: 9, owner: 'crashed-job' });
        const base = `/workspaces/${ws.workspaceId}/players/9`;
        const shown = await adminCall(admin, 'GET', `${base}/session`);
        expect(shown.body.data).to.deep.equal({
          userId: '9',
          version: 0,
          session: { sessionId: held.body.data.sessionId, owner: 'crashed-job', expiresAt: held.body.data.expiresAt },
        });
        // Support staff cannot write under a game server's lock either.
        const put = await adminCall(admin, 'PUT', base, { body: { key: 'k', value: 1 } });
        expect(put.body.code).to.equal('SESSION_LOCKED');
        const released = await adminCall(admin, 'DELETE', `${base}/session`);
        expect(released.body.data).to.deep.equal({ released: true, sessionId: held.body.data.sessionId, owner: 'crashed-job' });
        expect((await adminCall(admin, 'GET', `${base}/session`)).body.data.session).to.equal(null);
        expect((await adminCall(admin, 'DELETE', `${base}/session`)).status).to.equal(404);
        expect((await c.post('/data/set', { userId: 9, key: 'k', value: 1, sessionId: held.body.data.sessionId })).body.code).to.equal('SESSION_LOST');
      } finally {
        await admin.close();
      }
    });
  });
});
