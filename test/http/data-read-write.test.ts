// GET /data, POST /data/set and POST /data/delete: shapes, every value type, userId forms.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService, startTestService } from '../support/service.js';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('player data: set, get, getAll, delete', () => {
  const t = useService();
  let api: ReturnType<typeof client>;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    workspaceId = ws.workspaceId;
    api = client(t.service, ws.apiKey);
  });

  const VALUES: Array<[string, unknown]> = [
    ['integer', 100],
    ['zero', 0],
    ['negative float', -12.5],
    ['large number', 1.5e300],
    ['string', 'gold'],
    ['empty string', ''],
    ['unicode string', 'héllo wörld ✓ 🎮 日本'],
    ['string with quotes and escapes', 'a"b\\c\n\t\u0001'],
    ['true', true],
    ['false', false],
    ['object', { level: 3, name: 'knight' }],
    ['empty object', {}],
    ['array of strings', ['sword', 'shield']],
    ['empty array', []],
    ['nested', { inv: [{ id: 1, tags: ['a', 'b'], meta: { x: null, y: [[1], [2, [3]]] } }], ok: true }],
  ];

  for (const [name, value] of VALUES) {
    it(`round-trips a value: ${name}`, async () => {
      const set = await api.post('/data/set', { userId: 7, key: 'v', value });
      expect(set.status).to.equal(200);
      expect(set.body.success).to.equal(true);
      expect(set.body.data.key).to.equal('v');
      expect(set.body.data.value).to.deep.equal(value);
      expect(set.body.data.updated_at).to.match(ISO_MS);
      expect(set.body.version).to.equal(1);

      const get = await api.get('/data?userId=7&key=v');
      expect(get.status).to.equal(200);
      expect(get.body).to.deep.equal({ success: true, data: { key: 'v', value, updated_at: set.body.data.updated_at }, version: 1 });

      const all = await api.get('/data?userId=7');
      expect(all.body).to.deep.equal({ success: true, data: { v: value }, version: 1 });
    });
  }

  it('keeps updated_at per key, close to now, and moves it on overwrite', async () => {
    const before = Date.now();
    const a = await api.post('/data/set', { userId: 1, key: 'a', value: 1 });
    await new Promise((r) => setTimeout(r, 15));
    const b = await api.post('/data/set', { userId: 1, key: 'b', value: 2 });
    const tA = Date.parse(a.body.data.updated_at);
    const tB = Date.parse(b.body.data.updated_at);
    expect(tA).to.be.within(before - 5, Date.now());
    expect(tB).to.be.greaterThan(tA);
    expect((await api.get('/data?userId=1&key=a')).body.data.updated_at).to.equal(a.body.data.updated_at);
    const again = await api.post('/data/set', { userId: 1, key: 'a', value: 3 });
    expect(Date.parse(again.body.data.updated_at)).to.be.greaterThan(tA);
  });

  it('treats a numeric userId and its decimal string as the same player', async () => {
    await api.post('/data/set', { userId: 123456789, key: 'coins', value: 5 });
    expect((await api.get('/data?userId=123456789&key=coins')).body.data.value).to.equal(5);
    await api.post('/data/set', { userId: '123456789', key: 'gems', value: 2 });
    expect((await api.get('/data?userId=123456789')).body.data).to.deep.equal({ coins: 5, gems: 2 });
    expect(await t.redis.exists(keys.player(workspaceId, '123456789'))).to.equal(1);
  });

  it('accepts string ids with letters, digits, _ . -', async () => {
    const res = await api.post('/data/set', { userId: 'Player_1.a-b', key: 'k', value: 1 });
    expect(res.status).to.equal(200);
    expect((await api.get('/data?userId=Player_1.a-b&key=k')).body.data.value).to.equal(1);
  });

  it('answers 404 "Player not found" for a player with no data, and "Key not found" for a missing key', async () => {
    const none = await api.get('/data?userId=999&key=coins');
    expect(none.status).to.equal(404);
    expect(none.body).to.deep.equal({ success: false, error: 'Player not found', code: 'PLAYER_NOT_FOUND', version: 0 });
    const noneAll = await api.get('/data?userId=999');
    expect(noneAll.status).to.equal(404);
    expect(noneAll.body).to.deep.equal({ success: false, error: 'Player not found', code: 'PLAYER_NOT_FOUND', version: 0 });

    await api.post('/data/set', { userId: 999, key: 'other', value: 1 });
    const missing = await api.get('/data?userId=999&key=coins');
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ success: false, error: 'Key not found', code: 'KEY_NOT_FOUND', version: 1 });
  });

  it('round-trips keys with spaces, unicode and prototype names as plain data', async () => {
    const names = ['with space', 'ünï©ødé', '__proto__', 'constructor', 'prototype', 'a.b/c?d=e&f', 'x'.repeat(128)];
    for (const key of names) {
      expect((await api.post('/data/set', { userId: 3, key, value: key.length })).status, key).to.equal(200);
      const got = await api.get(`/data?userId=3&key=${encodeURIComponent(key)}`);
      expect(got.status, key).to.equal(200);
      expect(got.body.data.key).to.equal(key);
      expect(got.body.data.value).to.equal(key.length);
    }
    const all = await api.get('/data?userId=3');
    expect(Object.keys(JSON.parse(all.text).data).sort()).to.deep.equal([...names].sort());
    expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
  });

  it('deletes one key, reporting how many were removed, idempotently', async () => {
    await api.post('/data/set', { userId: 5, key: 'a', value: 1 });
    await api.post('/data/set', { userId: 5, key: 'b', value: 2 });
    expect((await api.post('/data/delete', { userId: 5, key: 'a' })).body).to.deep.equal({ success: true, data: { deleted: 1 }, version: 3 });
    // Deleting what is not there changes nothing, so the version stays.
    expect((await api.post('/data/delete', { userId: 5, key: 'a' })).body).to.deep.equal({ success: true, data: { deleted: 0 }, version: 3 });
    expect((await api.get('/data?userId=5')).body.data).to.deep.equal({ b: 2 });
  });

  it('deletes all of a player\'s data without key, idempotently, keeping only the version', async () => {
    for (const key of ['a', 'b', 'c']) await api.post('/data/set', { userId: '55', key, value: key });
    expect((await api.post('/data/delete', { userId: 55 })).body).to.deep.equal({ success: true, data: { deleted: 3 }, version: 4 });
    const fields = await t.redis.hkeys(keys.player(workspaceId, '55'));
    expect(fields.filter((f) => !f.startsWith('\0'))).to.deep.equal([]);
    const gone = await api.get('/data?userId=55');
    expect(gone.status).to.equal(404);
    expect(gone.body.version).to.equal(4);
    expect((await api.post('/data/delete', { userId: 55 })).body).to.deep.equal({ success: true, data: { deleted: 0 }, version: 4 });
  });

  it('a player whose last key is deleted is a player with no data', async () => {
    await api.post('/data/set', { userId: 8, key: 'only', value: 1 });
    await api.post('/data/delete', { userId: 8, key: 'only' });
    expect((await api.get('/data?userId=8&key=only')).body.error).to.equal('Player not found');
  });

  it('refuses a new key beyond the per-player maximum with 409, and writes nothing', async () => {
    const small = await startTestService({ MAX_KEYS_PER_PLAYER: '2' });
    try {
      const ws = await newWorkspace(t.redis);
      const c = client(small, ws.apiKey);
      await c.post('/data/set', { userId: 1, key: 'a', value: 1 });
      await c.post('/data/set', { userId: 1, key: 'b', value: 1 });
      const third = await c.post('/data/set', { userId: 1, key: 'c', value: 1 });
      expect(third.status).to.equal(409);
      expect(third.body.error).to.match(/maximum of 2 keys/);
      const inc = await c.post('/data/increment', { userId: 1, key: 'c' });
      expect(inc.status).to.equal(409);
      expect((await c.get('/data?userId=1')).body.data).to.deep.equal({ a: 1, b: 1 });
      expect((await c.post('/data/set', { userId: 1, key: 'a', value: 2 })).status).to.equal(200);
    } finally {
      await small.close();
    }
  });
});
