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
});
