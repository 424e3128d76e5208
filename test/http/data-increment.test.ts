// POST /data/increment: defaults, atomicity, fractions, refusals.
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { client, newWorkspace, useService } from '../support/service.js';

describe('POST /api/v1/data/increment', () => {
  const t = useService();
  let api: ReturnType<typeof client>;

  beforeEach(async () => {
    api = client(t.service, (await newWorkspace(t.redis, 'pro')).apiKey);
  });

  it('adds 1 to 0 by default, with the value at the top level', async () => {
    const res = await api.post('/data/increment', { userId: 1, key: 'n' });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, value: 1, version: 1 });
  });

  it('starts a missing key at defaultValue, then adds amount', async () => {
    expect((await api.post('/data/increment', { userId: 1, key: 'coins', amount: 5, defaultValue: 100 })).body.value).to.equal(105);
    expect((await api.post('/data/increment', { userId: 1, key: 'coins', amount: 5, defaultValue: 100 })).body.value).to.equal(110);
    const got = await api.get('/data?userId=1&key=coins');
    expect(got.body.data.value).to.equal(110);
    expect(got.body.data.updated_at).to.match(/Z$/);
  });

  it('adds to a number written by set, negative amounts included', async () => {
    await api.post('/data/set', { userId: 'p', key: 'hp', value: 50 });
    expect((await api.post('/data/increment', { userId: 'p', key: 'hp', amount: -20 })).body.value).to.equal(30);
  });

  it('keeps fractional amounts exact as JSON numbers: 0.5 + 0.25 = 0.75', async () => {
    await api.post('/data/increment', { userId: 1, key: 'f', amount: 0.5 });
    const res = await api.post('/data/increment', { userId: 1, key: 'f', amount: 0.25 });
    expect(res.text).to.equal('{"success":true,"value":0.75,"version":2}');
    await api.post('/data/increment', { userId: 1, key: 'g', amount: 0.1 });
    expect((await api.post('/data/increment', { userId: 1, key: 'g', amount: 0.2 })).body.value).to.equal(0.1 + 0.2);
  });

  it('never loses an update: 200 concurrent increments end exact', async () => {
    const results = await Promise.all(
      Array.from({ length: 200 }, () => api.post('/data/increment', { userId: 9, key: 'hits' })),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(200).fill(200));
    // Every new value is distinct: each increment saw the previous one.
    expect(new Set(results.map((r) => r.body.value)).size).to.equal(200);
    expect((await api.get('/data?userId=9&key=hits')).body.data.value).to.equal(200);
  });

  it('answers 409 for a value that is not a number, leaving it untouched', async () => {
    for (const [i, value] of (['12', { a: 1 }, [1], true] as const).entries()) {
      await api.post('/data/set', { userId: 2, key: 'x', value });
      const res = await api.post('/data/increment', { userId: 2, key: 'x', amount: 1 });
      expect(res.status).to.equal(409);
      // Each set raised the version; the refused increment did not.
      expect(res.body).to.deep.equal({ success: false, error: 'Stored value is not a number', code: 'NOT_A_NUMBER', version: i + 1 });
      expect((await api.get('/data?userId=2&key=x')).body.data.value).to.deep.equal(value);
    }
  });

  it('409 NOT_A_NUMBER for every stored value that is not a JSON number, writing nothing at all', async () => {
    const ws = await newWorkspace(t.redis, 'pro');
    const own = client(t.service, ws.apiKey);
    const hash = keys.player(ws.workspaceId, '3');
    const history = keys.playerHistory(ws.workspaceId, '3');
    // Strings that Lua's tonumber would read as numbers included: only a JSON number counts.
    const values = ['12', '0x10', ' 5', '1e3', 'inf', 'nan', '', true, false, { a: 1 }, {}, [1], [], [[2]]];
    for (const value of values) {
      const label = JSON.stringify(value);
      expect((await own.post('/data/set', { userId: 3, key: 'x', value })).status, label).to.equal(200);
      const before = { data: await t.redis.hgetall(hash), history: await t.redis.lrange(history, 0, -1) };
      const res = await own.post('/data/increment', { userId: 3, key: 'x', amount: 1, defaultValue: 5 });
      expect(res.status, label).to.equal(409);
      expect(res.body, label).to.deep.include({ success: false, code: 'NOT_A_NUMBER', version: Number(before.data['\0v']) });
      expect(await t.redis.hgetall(hash), label).to.deep.equal(before.data);
      expect(await t.redis.lrange(history, 0, -1), label).to.deep.equal(before.history);
      expect((await own.get('/data?userId=3&key=x')).body.data.value, label).to.deep.equal(value);
    }
    // A number stored next to them still increments: the refusal is about the value, not the key.
    await own.post('/data/set', { userId: 3, key: 'x', value: 41 });
    expect((await own.post('/data/increment', { userId: 3, key: 'x' })).body.value).to.equal(42);
  });

  it('answers 409 when the result would overflow, leaving the value untouched', async () => {
    await api.post('/data/set', { userId: 2, key: 'max', value: 1.7976931348623157e308 });
    const res = await api.post('/data/increment', { userId: 2, key: 'max', amount: 1e308 });
    expect(res.status).to.equal(409);
    expect((await api.get('/data?userId=2&key=max')).body.data.value).to.equal(1.7976931348623157e308);
  });

  it('answers 400 when userId or key is missing or amount is not a number', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ key: 'n' }, /Missing field "userId"/],
      [{ userId: 1 }, /Missing field "key"/],
      [{ userId: 1, key: 'n', amount: '5' }, /"amount".*must be a number/],
      [{ userId: 1, key: 'n', amount: null }, /"amount"/],
      [{ userId: 1, key: 'n', defaultValue: 'zero' }, /"defaultValue"/],
      [{ userId: 1, key: 'n', amount: 1, extra: true }, /Unknown field "extra"/],
    ];
    for (const [body, message] of cases) {
      const res = await api.post('/data/increment', body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.success).to.equal(false);
      expect(res.body.error).to.match(message);
    }
    expect((await api.get('/data?userId=1')).status).to.equal(404);
  });
});
