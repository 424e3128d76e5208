// POST /data/batch and the versions every answer carries: all or nothing for one player,
// independent outcomes for many, ifVersion, and the op-level refusals that write nothing.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService, startTestService } from '../support/service.js';

describe('safe saves: versions and batches', () => {
  const t = useService();
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  /** The player's data fields as stored, meta fields left out. */
  async function stored(userId: string): Promise<Record<string, string>> {
    const all = await t.redis.hgetall(keys.player(workspaceId, userId));
    return Object.fromEntries(Object.entries(all).filter(([field]) => !field.startsWith('\0')));
  }

  it('raises the version by one on every write that changes something, and only then', async () => {
    expect((await api.post('/data/set', { userId: 1, key: 'a', value: 1 })).body.version).to.equal(1);
    expect((await api.post('/data/increment', { userId: 1, key: 'b', amount: 2 })).body.version).to.equal(2);
    expect((await api.post('/data/delete', { userId: 1, key: 'nope' })).body.version).to.equal(2);
    expect((await api.post('/data/delete', { userId: 1, key: 'a' })).body.version).to.equal(3);
    expect((await api.get('/data?userId=1')).body.version).to.equal(3);
    expect((await api.get('/data?userId=1&key=b')).body.version).to.equal(3);
    // Deleting everything keeps the count going: a version number is never reused.
    expect((await api.post('/data/delete', { userId: 1 })).body.version).to.equal(4);
    expect((await api.post('/data/set', { userId: 1, key: 'a', value: 1 })).body.version).to.equal(5);
  });

  it('applies a write with ifVersion only at that version, else 409 VERSION_CONFLICT with the current one', async () => {
    await api.post('/data/set', { userId: 2, key: 'coins', value: 10 });
    const stale = await api.post('/data/set', { userId: 2, key: 'coins', value: 99, ifVersion: 0 });
    expect(stale.status).to.equal(409);
    expect(stale.body).to.include({ code: 'VERSION_CONFLICT', version: 1 });
    const inc = await api.post('/data/increment', { userId: 2, key: 'coins', amount: 5, ifVersion: 1 });
    expect(inc.body).to.deep.equal({ success: true, value: 15, version: 2 });
    const del = await api.post('/data/delete', { userId: 2, ifVersion: 1 });
    expect(del.body.code).to.equal('VERSION_CONFLICT');
    expect((await api.get('/data?userId=2&key=coins')).body.data.value).to.equal(15);
    // A new player is at version 0: ifVersion 0 means "only if it has no data yet".
    expect((await api.post('/data/set', { userId: 3, key: 'k', value: 1, ifVersion: 0 })).body.version).to.equal(1);
    expect((await api.post('/data/set', { userId: 3, key: 'k', value: 2, ifVersion: 0 })).body.code).to.equal('VERSION_CONFLICT');
  });

  it('applies a batch of set, increment and delete as one version, with one result per op in order', async () => {
    await api.post('/data/set', { userId: 42, key: 'tutorialStep', value: 3 });
    await api.post('/data/set', { userId: 42, key: 'coins', value: 100 });
    const res = await api.post('/data/batch', {
      userId: 42,
      ifVersion: 2,
      ops: [
        { op: 'set', key: 'inventory', value: { sword: 1 } },
        { op: 'increment', key: 'coins', amount: 5, defaultValue: 0 },
        { op: 'delete', key: 'tutorialStep' },
        { op: 'delete', key: 'neverThere' },
      ],
    });
    expect(res.status).to.equal(200);
    expect(res.body.version).to.equal(3);
    const [set, inc, del, none] = res.body.data.results;
    expect(set).to.deep.equal({ key: 'inventory', value: { sword: 1 }, updated_at: set.updated_at });
    expect(set.updated_at).to.match(/Z$/);
    expect(inc).to.deep.equal({ key: 'coins', value: 105 });
    expect(del).to.deep.equal({ key: 'tutorialStep', deleted: 1 });
    expect(none).to.deep.equal({ key: 'neverThere', deleted: 0 });
    expect((await api.get('/data?userId=42')).body).to.deep.equal({
      success: true,
      data: { coins: 105, inventory: { sword: 1 } },
      version: 3,
    });
  });

  it('writes nothing of a batch when one op fails: not a number, too many keys, too large, a stale version', async () => {
    const small = await startTestService({ MAX_KEYS_PER_PLAYER: '3', MAX_PLAYER_BYTES: '2048' });
    try {
      const ws = await newWorkspace(t.redis);
      const c = client(small, ws.apiKey);
      await c.post('/data/batch', { userId: 7, ops: [{ op: 'set', key: 'name', value: 'Ada' }, { op: 'set', key: 'coins', value: 1 }] });
      const before = await t.redis.hgetall(keys.player(ws.workspaceId, '7'));

      const notNumber = await c.post('/data/batch', {
        userId: 7,
        ops: [{ op: 'set', key: 'coins', value: 50 }, { op: 'increment', key: 'name' }],
      });
      expect(notNumber.status).to.equal(409);
      expect(notNumber.body).to.include({ code: 'NOT_A_NUMBER', version: 1 });
      expect(notNumber.body.error).to.equal('ops[1] ("name"): Stored value is not a number');

      const tooMany = await c.post('/data/batch', {
        userId: 7,
        ops: [{ op: 'set', key: 'coins', value: 2 }, { op: 'set', key: 'x', value: 1 }, { op: 'set', key: 'y', value: 1 }],
      });
      expect(tooMany.body.code).to.equal('TOO_MANY_KEYS');

      const tooLarge = await c.post('/data/batch', {
        userId: 7,
        ops: [{ op: 'set', key: 'coins', value: 3 }, { op: 'set', key: 'big', value: 'x'.repeat(3000) }],
      });
      expect(tooLarge.status).to.equal(413);
      expect(tooLarge.body.code).to.equal('PLAYER_TOO_LARGE');

      const stale = await c.post('/data/batch', { userId: 7, ifVersion: 0, ops: [{ op: 'set', key: 'coins', value: 4 }] });
      expect(stale.body.code).to.equal('VERSION_CONFLICT');

      expect(await t.redis.hgetall(keys.player(ws.workspaceId, '7'))).to.deep.equal(before);
      // Shrinking is always allowed, even for a player over the limit.
      expect((await c.post('/data/batch', { userId: 7, ops: [{ op: 'delete', key: 'name' }] })).status).to.equal(200);
    } finally {
      await small.close();
    }
  });

  it('refuses a malformed batch with 400 naming the op, before writing anything', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ userId: 1, ops: [{ op: 'set', key: 'a', value: 1 }, { op: 'jump', key: 'b' }] }, /ops\[1\]\.op/],
      [{ userId: 1, ops: [{ op: 'set', key: 'a' }] }, /Missing field "ops\[0\]\.value"/],
      [{ userId: 1, ops: [{ op: 'increment', key: 'a', amount: 'x' }] }, /ops\[0\]\.amount/],
      [{ userId: 1, ops: [{ op: 'delete', key: 'a', value: 1 }] }, /ops\[0\]\.value.*only a set/],
      [{ userId: 1, ops: [{ op: 'set', key: 'a', value: 1 }, { op: 'delete', key: 'a' }] }, /appears twice/],
      [{ userId: 1, ops: [] }, /at least one op/],
      [{ userId: 1, ops: Array.from({ length: 101 }, (_, i) => ({ op: 'set', key: `k${i}`, value: i })) }, /ops/],
      [{ userId: 1, ops: [{ op: 'set', key: '', value: 1 }] }, /ops\[0\]\.key/],
      [{ userId: 1, ops: [{ op: 'set', key: 'a', value: null }] }, /ops\[0\]\.value/],
      [{ userId: 1, ifVersion: -1, ops: [{ op: 'set', key: 'a', value: 1 }] }, /ifVersion/],
      [{ userId: 1, release: true, ops: [] }, /./],
      [{ players: [] }, /players/],
      [{ players: [{ userId: 1, ops: [{ op: 'set', key: 'a', value: 1 }] }, { userId: '1', ops: [{ op: 'set', key: 'b', value: 1 }] }] }, /appears twice/],
      [{ players: [{ userId: 1, ops: [{ op: 'set', key: 'a', value: 1 }] }, { userId: 2, ops: [{ op: 'nope', key: 'b' }] }] }, /players\[1\]\.ops\[0\]\.op/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/data/batch', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).to.equal(400);
      expect(res.body.code).to.equal('INVALID_REQUEST');
      expect(res.body.error).to.match(message);
    }
    expect(await t.redis.exists(keys.player(workspaceId, '1'))).to.equal(0);
    expect(await t.redis.exists(keys.player(workspaceId, '2'))).to.equal(0);
  });

  it('saves many players in one request, each atomic and independent, as one request against the plan', async () => {
    await api.post('/data/set', { userId: 2, key: 'coins', value: 'not a number' });
    const res = await api.post('/data/batch', {
      players: [
        { userId: 1, ops: [{ op: 'set', key: 'level', value: 3 }, { op: 'increment', key: 'coins', amount: 10 }] },
        { userId: 2, ops: [{ op: 'set', key: 'level', value: 4 }, { op: 'increment', key: 'coins', amount: 10 }] },
        { userId: 'three', ifVersion: 5, ops: [{ op: 'set', key: 'level', value: 5 }] },
      ],
    });
    expect(res.status).to.equal(200);
    const [one, two, three] = res.body.data.players;
    expect(one).to.deep.equal({
      userId: '1',
      success: true,
      version: 1,
      results: [{ key: 'level', value: 3, updated_at: one.results[0].updated_at }, { key: 'coins', value: 10 }],
    });
    expect(two).to.deep.include({ userId: '2', success: false, status: 409, code: 'NOT_A_NUMBER', version: 1 });
    expect(three).to.deep.include({ userId: 'three', success: false, status: 409, code: 'VERSION_CONFLICT', version: 0 });
    expect(Object.keys(await stored('2'))).to.deep.equal(['coins']);
    expect((await api.get('/data?userId=2')).body.data).to.deep.equal({ coins: 'not a number' });
    // Two requests in this workspace: the set above and the batch of three players.
    expect(res.headers.get('x-ratelimit-remaining')).to.equal(String(300 - 2));
  });
});
