// A many-player request answered by the release before the claims were spread (its claim, with
// its whole answer, in the workspace's own slot) and retried after the upgrade: answered from
// that claim, applied once; the key reused for another many-player request is still refused.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService } from '../support/service.js';

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const hashOf = (key: string) => createHash('sha256').update(key).digest('base64url');

describe('claims kept by the release before the spread', () => {
  const t = useService();

  it('answers a batch retried across the upgrade from the old claim, and refuses its key for another batch', async () => {
    const ws = await newWorkspace(t.redis);
    const api = client(t.service, ws.apiKey);
    const players = ['a', 'b', 'c'].map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 2 }] }));
    const first = await api.post('/data/batch', { players }, withKey('across-upgrade'));
    expect(first.status, first.text).to.equal(200);
    // As the release before kept it: the claim, with the whole answer, in the workspace's slot;
    // the players' own records gone after their minute.
    const hash = hashOf('across-upgrade');
    expect(await t.redis.rename(keys.idempotencyClaim(ws.workspaceId, hash), keys.legacyIdempotencyClaim(ws.workspaceId, hash))).to.equal('OK');
    for (const { userId } of players) await t.redis.del(keys.playerIdempotency(ws.workspaceId, userId, hash));

    const again = await api.post('/data/batch', { players }, withKey('across-upgrade'));
    expect(again.status, again.text).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.text).to.equal(first.text);
    for (const { userId } of players) expect((await api.get(`/data?userId=${userId}&key=n`)).body.data.value).to.equal(2);
    // And a third time, now that the new claim exists too.
    expect((await api.post('/data/batch', { players }, withKey('across-upgrade'))).text).to.equal(first.text);

    const other = await api.post('/data/batch', { players: players.slice(0, 2) }, withKey('across-upgrade'));
    expect(other.status, other.text).to.equal(422);
    expect(other.body.code).to.equal('IDEMPOTENCY_KEY_REUSED');
  });

  it('stops reading them twice IDEMPOTENCY_TTL_SECONDS after this release first read one in the workspace', async () => {
    const players = ['a', 'b'].map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 1 }] }));
    // A claim of the key for another request, as the release before kept it: refused while such
    // a claim may live, and the first read marks when this release began reading them.
    const open = await newWorkspace(t.redis);
    await t.redis.set(keys.legacyIdempotencyClaim(open.workspaceId, hashOf('old-key')), 'another-request');
    const startedAt = Date.now();
    const refused = await client(t.service, open.apiKey).post('/data/batch', { players }, withKey('old-key'));
    expect(refused.status, refused.text).to.equal(422);
    const since = Number(await t.redis.get(keys.claimsSpreadSince(open.workspaceId)));
    expect(since).to.be.within(startedAt - 1000, Date.now() + 1000);

    // The same, in a workspace whose first read was longer ago than two claims' lives: not read.
    const past = await newWorkspace(t.redis);
    await t.redis.set(keys.claimsSpreadSince(past.workspaceId), '1');
    await t.redis.set(keys.legacyIdempotencyClaim(past.workspaceId, hashOf('old-key')), 'another-request');
    const served = await client(t.service, past.apiKey).post('/data/batch', { players }, withKey('old-key'));
    expect(served.status, served.text).to.equal(200);
    expect(await t.redis.get(keys.claimsSpreadSince(past.workspaceId))).to.equal('1');
    // And once the instance knows it, without reading the mark again.
    await t.redis.set(keys.legacyIdempotencyClaim(past.workspaceId, hashOf('old-key-2')), 'another-request');
    const again = await client(t.service, past.apiKey).post('/data/batch', { players }, withKey('old-key-2'));
    expect(again.status, again.text).to.equal(200);
  });
});
