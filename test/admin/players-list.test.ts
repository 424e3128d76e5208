// The players list of a workspace (GET /admin/v1/workspaces/:id/players): kept by the write
// path, newest written first, paged by a cursor that writes do not shift, searched by exact id
// and by prefix, each row read from the player's own hash; admin writes listed at once; a
// player whose data is deleted entirely leaves it; `pds player index` adds players written
// before the list existed.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { encodeEntry } from '../../src/domain/entry.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, testClock, useService } from '../support/service.js';
import { randomId } from '../support/random.js';

describe('admin API: the players of a workspace', function () {
  this.timeout(30_000);
  const clock = testClock(Date.now() - 3_600_000);
  const h = useService({ ADMIN_TOKEN, PLAYER_INDEX_FLUSH_MS: '60000' }, { clock: clock.now });
  const list = async (ws: string, query = '') => {
    const res = await adminCall(h.service, 'GET', `/workspaces/${ws}/players${query}`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { listed: number; next: string | null; players: Array<{ userId: string; lastWriteAt: string | null; version: number; keys: number | null; bytes: number | null; session: { owner: string } | null }> };
  };

  it('pages the players newest written first with their version, size and session, and a cursor that later writes do not shift', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `list-${randomId()}`, plan: 'pro' });
    const set = (userId: string, value: unknown) => call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value } });
    for (let i = 0; i < 30; i++) {
      clock.advance(1000);
      expect((await set(`p${String(i).padStart(2, '0')}`, i)).status).to.equal(200);
    }
    await set('p00', 'again'); // the same time as p29: ties come in descending id order
    await call(h.service, 'POST', '/sessions/acquire', { key: ws.apiKey, body: { userId: 'p05', owner: 'job-5' } });
    // Nothing is listed before the instance's batch is written.
    expect((await list(ws.workspaceId)).listed).to.equal(0);
    await h.service.playerIndex.flush();

    const first = await list(ws.workspaceId, '?limit=25');
    expect(first.listed).to.equal(30);
    expect(first.players.map((p) => p.userId).slice(0, 4)).to.deep.equal(['p29', 'p00', 'p28', 'p27']);
    expect(first.players).to.have.length(25);
    const p00 = first.players[1]!;
    expect(p00).to.include({ version: 2, keys: 1 });
    expect(p00.bytes).to.be.greaterThan(10);
    expect(p00.lastWriteAt).to.equal(new Date(clock.now()).toISOString());
    expect(first.next).to.be.a('string');

    // A write between the pages moves a player of page 2 to the top: page 2 neither repeats nor skips.
    clock.advance(1000);
    await set('p02', 'moved');
    await h.service.playerIndex.flush();
    const second = await list(ws.workspaceId, `?limit=25&cursor=${encodeURIComponent(first.next!)}`);
    expect(second.players.map((p) => p.userId)).to.deep.equal(['p05', 'p04', 'p03', 'p01']);
    expect(second.players[0]!.session).to.deep.include({ owner: 'job-5' });
    expect(second.next).to.equal(null);
  });

  it('finds players by exact id (also one written before the list existed) and by prefix', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `find-${randomId()}` });
    for (const userId of ['alpha-1', 'alpha-2', 'beta-1']) {
      await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'k', value: 1 } });
    }
    await h.service.playerIndex.flush();
    const alpha = await list(ws.workspaceId, '?prefix=alpha');
    expect(alpha.players.map((p) => p.userId).sort()).to.deep.equal(['alpha-1', 'alpha-2']);
    expect(alpha.next).to.equal(null);
    expect((await list(ws.workspaceId, '?prefix=gamma')).players).to.deep.equal([]);
    expect((await list(ws.workspaceId, '?userId=beta-1')).players.map((p) => p.userId)).to.deep.equal(['beta-1']);
    expect((await list(ws.workspaceId, '?userId=nobody')).players).to.deep.equal([]);

    // A player written straight into Redis, as before the list existed: found by id, not listed.
    await h.redis.hset(keys.player(ws.workspaceId, 'old-timer'), 'coins', encodeEntry('5', 1_700_000_000_000));
    const old = (await list(ws.workspaceId, '?userId=old-timer')).players;
    expect(old).to.have.length(1);
    expect(old[0]).to.include({ userId: 'old-timer', lastWriteAt: null });
    expect((await list(ws.workspaceId, '?prefix=old')).players).to.deep.equal([]);
    // The backfill puts it on the list at its latest updated_at.
    const indexed = await testOps(h.redis).indexPlayers(ws.workspaceId);
    expect(indexed).to.include({ seen: 4, listed: 4 });
    expect((await list(ws.workspaceId, '?prefix=old')).players[0]).to.include({ userId: 'old-timer', lastWriteAt: new Date(1_700_000_000_000).toISOString() });
  });

  it('lists an admin write at once, and drops a player whose data is deleted entirely', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `drop-${randomId()}` });
    const put = await adminCall(h.service, 'PUT', `/workspaces/${ws.workspaceId}/players/support-1`, { body: { key: 'note', value: 'hi' } });
    expect(put.status).to.equal(200);
    expect((await list(ws.workspaceId)).players.map((p) => p.userId)).to.deep.equal(['support-1']);

    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'gone', key: 'k', value: 1 } });
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'kept', key: 'k', value: 1 } });
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'kept', key: 'j', value: 1 } });
    await call(h.service, 'POST', '/data/delete', { key: ws.apiKey, body: { userId: 'kept', key: 'j' } });
    await h.service.playerIndex.flush();
    expect((await list(ws.workspaceId)).listed).to.equal(3);
    clock.advance(1000);
    await call(h.service, 'POST', '/data/delete', { key: ws.apiKey, body: { userId: 'gone' } });
    await h.service.playerIndex.flush();
    expect((await list(ws.workspaceId)).players.map((p) => p.userId).sort()).to.deep.equal(['kept', 'support-1']);
    const del = await adminCall(h.service, 'DELETE', `/workspaces/${ws.workspaceId}/players/support-1`);
    expect(del.status).to.equal(200);
    expect((await list(ws.workspaceId)).players.map((p) => p.userId)).to.deep.equal(['kept']);
  });

  it('answers bad input with a 400 in the envelope, and an unknown workspace with 404', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `bad-${randomId()}` });
    for (const query of ['?limit=0', '?limit=101', '?cursor=nonsense', '?prefix=a*', '?prefix=', '?prefix=a&cursor=x', '?userId=a%20b']) {
      const res = await adminCall(h.service, 'GET', `/workspaces/${ws.workspaceId}/players${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body).to.include({ success: false });
      expect(res.body.code, query).to.be.a('string');
    }
    const missing = await adminCall(h.service, 'GET', '/workspaces/ws_nope_missing/players');
    expect(missing.status).to.equal(404);
    expect(missing.body.code).to.equal('NOT_FOUND');
  });

  it('leaves nothing of the list behind when the workspace is deleted, and a late batch writes nothing', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `del-${randomId()}` });
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'x', key: 'k', value: 1 } });
    await h.service.playerIndex.flush();
    expect(await h.redis.zcard(keys.workspacePlayers(ws.workspaceId))).to.equal(1);
    h.service.playerIndex.note(ws.workspaceId, 'late', clock.now(), 0);
    await testOps(h.redis).deleteWorkspace(ws.workspaceId);
    await h.service.playerIndex.flush();
    expect(await h.redis.exists(keys.workspacePlayers(ws.workspaceId))).to.equal(0);
  });
});
