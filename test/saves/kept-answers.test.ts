// Everything a workspace makes Redis keep is counted in its storage total or bounded by a small
// constant per request: answers kept for Idempotency-Keys (one record per request, counted while
// they may be alive, kept shorter over the quota), and players held by a session before they
// have any data (kept only with the lease, refused over the quota). Real Redis, real HTTP.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { testOps } from '../support/admin.js';
import { client, newWorkspace, useService } from '../support/service.js';

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const QUOTA = 20_000;

describe('what a workspace makes Redis keep', function () {
  this.timeout(60_000);
  const t = useService({ STORAGE_QUOTA_FREE_BYTES: String(QUOTA), STORAGE_FLUSH_MS: '50', STORAGE_REFRESH_MS: '50', RATE_LIMIT_FREE: '100000' });

  /** The workspace's keys of kept answers (players' and the claims), with their TTLs in seconds. */
  async function keptKeys(workspaceId: string): Promise<Array<[string, number]>> {
    const found = [
      ...(await t.redis.keys(`${keys.playerPattern(workspaceId)}:i:*`)),
      ...(await t.redis.keys(keys.idempotencyClaim(workspaceId, '*'))),
    ];
    return Promise.all(found.map(async (key) => [key, await t.redis.ttl(key)] as [string, number]));
  }
  const storageOf = async (workspaceId: string) => (await testOps(t.redis).showWorkspace(workspaceId)).storage;
  const settle = () => new Promise((r) => setTimeout(r, 200));

  it('keeps one record for a batch of many players: the whole answer in its claim, each player’s for a minute only', async () => {
    const ws = await newWorkspace(t.redis, 'pro');
    const api = client(t.service, ws.apiKey);
    const players = Array.from({ length: 20 }, (_, i) => ({ userId: `p${i}`, ops: [{ op: 'increment', key: 'n', amount: 2 }] }));
    const first = await api.post('/data/batch', { players }, withKey('many-1'));
    expect(first.status).to.equal(200);
    const kept = await keptKeys(ws.workspaceId);
    const claims = kept.filter(([key]) => key.includes(':idem:'));
    const perPlayer = kept.filter(([key]) => key.includes(':i:'));
    expect(claims).to.have.length(1);
    expect(claims[0]![1]).to.be.above(86_000);
    expect(perPlayer).to.have.length(20);
    for (const [key, ttl] of perPlayer) expect(ttl, key).to.be.within(1, 60);
    // Once the players' own records are gone, the retry is answered from the claim, exactly.
    await t.redis.del(...perPlayer.map(([key]) => key));
    const again = await api.post('/data/batch', { players }, withKey('many-1'));
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
    for (let i = 0; i < 20; i++) expect((await api.get(`/data?userId=p${i}&key=n`)).body.data.value).to.equal(2);
  });

  it('counts kept answers in the workspace’s storage total, apart, while they may be alive', async () => {
    const ws = await newWorkspace(t.redis, 'pro');
    const api = client(t.service, ws.apiKey);
    for (let i = 0; i < 10; i++) expect((await api.post('/data/increment', { userId: 'k', key: 'n' }, withKey(`inc-${i}`))).status).to.equal(200);
    await settle();
    const storage = await storageOf(ws.workspaceId);
    // A claim and a player's record each: about 360 bytes a write with a key.
    expect(storage.keptBytes).to.be.within(10 * 250, 10 * 500);
    const players = (await t.redis.hmget(keys.player(ws.workspaceId, 'k'), '\0b', '\0h')).reduce((n, v) => n + Number(v ?? 0), 0);
    expect(storage.bytes).to.equal(players + storage.keptBytes);
  });

  it('over its quota, a workspace still deletes and releases, keeps their answers 10 minutes, and cannot hold a player with no data', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    const api = client(t.service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'big', key: 'v', value: 'x'.repeat(QUOTA) })).status).to.equal(200);
    await settle();
    expect((await api.post('/data/set', { userId: 'big', key: 'w', value: 1 })).body.code).to.equal('STORAGE_QUOTA_EXCEEDED');

    // 30 batches of 50 deletes of missing keys, each with a key of its own: one lasting record a
    // request (its claim), kept 10 minutes; the players' own gone within a minute.
    for (let r = 0; r < 30; r++) {
      const players = Array.from({ length: 50 }, (_, i) => ({ userId: `d${i}`, ops: [{ op: 'delete', key: 'nothing' }] }));
      expect((await api.post('/data/batch', { players }, withKey(`del-${r}`))).status).to.equal(200);
    }
    const kept = await keptKeys(ws.workspaceId);
    const lasting = kept.filter(([, ttl]) => ttl > 60);
    expect(lasting).to.have.length(30);
    for (const [key, ttl] of lasting) expect(ttl, key).to.be.within(1, 600);
    // Deleting missing keys makes no player hashes.
    expect(await t.redis.exists(keys.player(ws.workspaceId, 'd0'))).to.equal(0);

    // A player that never had data cannot be held over the quota; one with data can, and release.
    const refused = await api.post('/sessions/acquire', { userId: 'new-one', owner: 'job-1' });
    expect(refused.status).to.equal(403);
    expect(refused.body.code).to.equal('STORAGE_QUOTA_EXCEEDED');
    expect(await t.redis.exists(keys.player(ws.workspaceId, 'new-one'))).to.equal(0);
    const held = await api.post('/sessions/acquire', { userId: 'big', owner: 'job-1' });
    expect(held.status).to.equal(200);
    expect((await api.post('/sessions/release', { userId: 'big', sessionId: held.body.data.sessionId })).body.data.released).to.equal(true);
  });

  it('keeps a player held before it has data only with its lease, deletes it on release, and keeps it for good once written', async () => {
    const ws = await newWorkspace(t.redis, 'pro');
    const api = client(t.service, ws.apiKey);
    const hash = (user: string) => keys.player(ws.workspaceId, user);
    const a = await api.post('/sessions/acquire', { userId: 'a', owner: 'job-1', ttlSeconds: 30 });
    expect(await t.redis.ttl(hash('a'))).to.be.within(60, 90);
    await api.post('/sessions/release', { userId: 'a', sessionId: a.body.data.sessionId });
    expect(await t.redis.exists(hash('a'))).to.equal(0);

    const b = await api.post('/sessions/acquire', { userId: 'b', owner: 'job-1', ttlSeconds: 30 });
    expect((await api.post('/data/set', { userId: 'b', key: 'k', value: 1, sessionId: b.body.data.sessionId })).status).to.equal(200);
    expect(await t.redis.ttl(hash('b'))).to.equal(-1);
    await api.post('/sessions/release', { userId: 'b', sessionId: b.body.data.sessionId });
    expect((await api.get('/data?userId=b&key=k')).body.data.value).to.equal(1);
  });
});
