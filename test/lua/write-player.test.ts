// lua/write-player.lua directly: the meta it keeps (version, counts, bytes), the history of what
// each write replaced and its trimming, and the counts it computes for a player written before
// versions existed.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore } from '../../src/store/players/player-data.js';
import type { PlayerLimits, PlayerWrite, WriteReply } from '../../src/store/players/script-protocol.js';
import { ErrorCode } from '../../src/errors.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const LIMITS: PlayerLimits = {
  maxKeysPerPlayer: 100,
  maxPlayerBytes: 1_000_000,
  idempotencyTtlSeconds: 60,
  history: { maxVersions: 3, maxAgeMs: 3_600_000, maxBytes: 10_000 },
};

/** An applied write's reply, or the test fails with the refusal. */
function applied(reply: WriteReply): Extract<WriteReply, { applied: true }> {
  if (!reply.applied) throw new Error(`refused: ${JSON.stringify(reply.refusal)}`);
  return reply;
}

describe('lua/write-player.lua', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, LIMITS);
  });
  beforeEach(() => {
    ws = `ws_${randomId()}`;
  });
  after(() => redis.disconnect());

  const write = (userId: string, w: PlayerWrite, nowMs = Date.now()) => store.write(ws, userId, w, { nowMs, kind: 'test', actor: 'key:k1' });
  const set = (key: string, value: unknown) => ({ op: 'set' as const, key, valueJson: JSON.stringify(value) });
  const meta = async (userId: string) => {
    const [v, n, b, h] = await redis.hmget(keys.player(ws, userId), '\0v', '\0n', '\0b', '\0h');
    return { version: Number(v), keys: Number(n), bytes: Number(b), history: Number(h) };
  };
  /** Bytes of the data as the limit counts them: key names plus stored entries. */
  const dataBytes = async (userId: string) => {
    const all = await redis.hgetall(keys.player(ws, userId));
    return Object.entries(all)
      .filter(([f]) => !f.startsWith('\0'))
      .reduce((sum, [f, v]) => sum + Buffer.byteLength(f) + Buffer.byteLength(v), 0);
  };

  it('keeps the version, the key count and the bytes of data exact through every kind of write', async () => {
    await write('1', { ops: [set('a', 'x'.repeat(100)), set('b', 1)] });
    await write('1', { ops: [{ op: 'increment', key: 'b', amount: 2, defaultValue: 0 }, { op: 'delete', key: 'a' }, set('ü', [1, 2])] });
    expect(await meta('1')).to.include({ version: 2, keys: 2, bytes: await dataBytes('1') });
    const reply = await write('1', { ops: [], deleteAll: true });
    expect(applied(reply.reply).version).to.equal(3);
    expect(await meta('1')).to.include({ version: 3, keys: 0, bytes: 0 });
  });

  it('reports the bytes and players it adds, for the workspace totals', async () => {
    const first = await write('2', { ops: [set('a', 1)] });
    const { dataBytes: bytes, players } = applied(first.reply).storage;
    expect(players).to.equal(1);
    expect(bytes).to.equal(await dataBytes('2'));
    const gone = applied((await write('2', { ops: [{ op: 'delete', key: 'a' }] })).reply);
    expect(gone.storage.players).to.equal(-1);
    expect(gone.storage.dataBytes).to.equal(-bytes);
  });

  it('keeps what each write replaced, newest first, none for a first write, trimmed to the most versions', async () => {
    const t0 = Date.now();
    await write('3', { ops: [set('a', 1)] }, t0);
    expect(await redis.llen(keys.playerHistory(ws, '3'))).to.equal(0);
    await write('3', { ops: [set('a', 2), set('b', true)] }, t0 + 1);
    const [entry] = await store.history(ws, '3');
    const [header, ...rest] = entry!.split('\n');
    expect(JSON.parse(header!)).to.deep.equal({ v: 2, t: t0 + 1, k: 'test', by: 'key:k1', keys: ['a', 'b'], lens: [encodeEntry('1', t0).length, -1] });
    expect(rest.join('\n')).to.equal(encodeEntry('1', t0));
    for (let i = 3; i <= 6; i++) await write('3', { ops: [set('a', i)] }, t0 + i);
    const history = await store.history(ws, '3');
    expect(history.map((e) => JSON.parse(e.split('\n')[0]!).v)).to.deep.equal([6, 5, 4]);
    expect((await meta('3')).history).to.equal(history.reduce((sum, e) => sum + Buffer.byteLength(e), 0));
  });

  it('drops history older than the age limit or beyond the byte budget, keeping the newest entry', async () => {
    const tight = new PlayerDataStore(redis, { ...LIMITS, history: { maxVersions: 50, maxAgeMs: 1000, maxBytes: 300 } });
    const w = (i: number, now: number) => tight.write(ws, '4', { ops: [set('a', 'y'.repeat(100 + i))] }, { nowMs: now, kind: 'set', actor: 'a' });
    const t0 = Date.now();
    await w(0, t0);
    await w(1, t0 + 10);
    await w(2, t0 + 20);
    // Two entries of about 250 bytes do not fit in 300: only the newest stays.
    expect(await tight.history(ws, '4')).to.have.length(1);
    await w(3, t0 + 5000);
    const kept = await tight.history(ws, '4');
    expect(kept.map((e) => JSON.parse(e.split('\n')[0]!).v)).to.deep.equal([4]);
  });

  it('keeps an entry young enough even when the last trim left only a bound on the oldest time', async () => {
    const DAY = 86_400_000;
    const t0 = Date.now() - 20 * DAY;
    const versions = (s: PlayerDataStore) => s.history(ws, '7').then((h) => h.map((e) => JSON.parse(e.split('\n')[0]!).v));
    const byCount = new PlayerDataStore(redis, { ...LIMITS, history: { maxVersions: 3, maxAgeMs: 100 * DAY, maxBytes: 10_000 } });
    for (let day = 0; day <= 4; day++) {
      await byCount.write(ws, '7', { ops: [set('a', day)] }, { nowMs: t0 + day * DAY, kind: 'set', actor: 'a' });
    }
    // Versions 3-5 (written on days 2-4) stay; the dropped version 2 (day 1) stands for the oldest time.
    expect(await versions(byCount)).to.deep.equal([5, 4, 3]);
    expect(Number(await redis.hget(keys.player(ws, '7'), '\0t'))).to.equal(t0 + DAY);
    // On day 11 with 9.5 days kept, that bound (day 1) is too old but version 3 (day 2) is not.
    const byAge = new PlayerDataStore(redis, { ...LIMITS, history: { maxVersions: 10, maxAgeMs: 9.5 * DAY, maxBytes: 10_000 } });
    await byAge.write(ws, '7', { ops: [set('a', 11)] }, { nowMs: t0 + 11 * DAY, kind: 'set', actor: 'a' });
    expect(await versions(byAge)).to.deep.equal([6, 5, 4, 3]);
    expect(Number(await redis.hget(keys.player(ws, '7'), '\0t'))).to.equal(t0 + 2 * DAY);
    // On day 12.6, versions 3 and 4 (days 2 and 3) are past 9.5 days.
    await byAge.write(ws, '7', { ops: [set('a', 12)] }, { nowMs: t0 + 12.6 * DAY, kind: 'set', actor: 'a' });
    expect(await versions(byAge)).to.deep.equal([7, 6, 5]);
  });

  it('computes the counts of a player written before versions once, and starts it at version 1', async () => {
    const hash = keys.player(ws, '5');
    await redis.hset(hash, 'coins', encodeEntry('5', 1000), 'name', encodeEntry('"Ada"', 1000));
    const reply = await write('5', { ops: [{ op: 'increment', key: 'coins', amount: 1, defaultValue: 0 }] });
    expect(applied(reply.reply).version).to.equal(2);
    // A legacy player was never counted in the workspace total: no player added.
    expect(applied(reply.reply).storage.players).to.equal(0);
    expect(await meta('5')).to.include({ version: 2, keys: 2, bytes: await dataBytes('5') });
  });

  it('refuses an increment of a stored value that is not a JSON number (-1, version, op index), writing nothing', async () => {
    const hash = keys.player(ws, '7');
    const history = keys.playerHistory(ws, '7');
    const values = ['12', '0x10', ' 5', 'inf', 'nan', '', true, false, { a: 1 }, {}, [1], []];
    for (const value of values) {
      const label = JSON.stringify(value);
      await write('7', { ops: [set('x', value)] });
      const before = { data: await redis.hgetall(hash), history: await redis.lrange(history, 0, -1) };
      const version = Number(before.data['\0v']);
      // Second op of a batch whose first op alone would apply: nothing of the batch is written.
      const reply = await write('7', { ops: [set('other', 1), { op: 'increment', key: 'x', amount: 1, defaultValue: 0 }] });
      expect(reply.reply, label).to.deep.equal({ applied: false, refusal: { code: ErrorCode.NOT_A_NUMBER, version, opIndex: 1 } });
      expect(await redis.hgetall(hash), label).to.deep.equal(before.data);
      expect(await redis.lrange(history, 0, -1), label).to.deep.equal(before.history);
    }
    // Numbers in every JSON form do increment.
    for (const [stored, expected] of [[41, '42'], [-1.5, '-0.5'], [1e3, '1001']] as const) {
      await write('7', { ops: [set('n', stored)] });
      const reply = await write('7', { ops: [{ op: 'increment', key: 'n', amount: 1, defaultValue: 0 }] });
      expect(applied(reply.reply).results.at(-1), String(stored)).to.equal(expected);
    }
  });

  it('writes nothing for a write that changes nothing on a new player', async () => {
    const reply = await write('6', { ops: [{ op: 'delete', key: 'a' }] });
    expect(reply.reply).to.deep.equal({ applied: true, version: 0, storage: { dataBytes: 0, players: 0, historyBytes: 0 }, results: ['0'] });
    expect(await redis.exists(keys.player(ws, '6'))).to.equal(0);
  });
});
