// lua/write-player.lua directly: the meta it keeps (version, counts, bytes), the restore points
// (lua/includes/restore-points.lua) with their thinning and trimming, the bytes it reports for
// the byte budget, and the counts it computes for a player written before versions existed.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore } from '../../src/store/players/player-data.js';
import { parseHistoryElement } from '../../src/store/players/player-history.js';
import type { PlayerLimits, PlayerWrite, WriteReply } from '../../src/store/players/script-protocol.js';
import { ErrorCode } from '../../src/errors.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const LIMITS: PlayerLimits = {
  maxKeysPerPlayer: 100,
  maxPlayerBytes: 1_000_000,
  idempotencyTtlSeconds: 60,
  history: { intervalMs: 300_000, maxVersions: 1000, fineMs: 86_400_000, hourlyMs: 168 * 3_600_000, maxAgeMs: 30 * 86_400_000, maxBytes: 10_000 },
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

  const MINUTE = 60_000;
  const HOUR = 60 * MINUTE;
  /** Restore points every 5 minutes, every point kept for 2 hours, then one an hour. */
  const POINTS = { intervalMs: 5 * MINUTE, maxVersions: 1000, fineMs: 2 * HOUR, hourlyMs: 168 * 3_600_000, maxAgeMs: 30 * 24 * HOUR, maxBytes: 1_000_000 };
  /** A time at the start of an interval (and of a UTC hour), in the past. */
  const T0 = Math.floor((Date.now() - 10 * 24 * HOUR) / HOUR) * HOUR;
  const elements = async (userId: string, list: 'fine' | 'coarse' = 'fine') => {
    const key = list === 'fine' ? keys.playerHistory(ws, userId) : keys.playerHistoryCoarse(ws, userId);
    return (await redis.lrangeBuffer(key, 0, -1)).map(parseHistoryElement);
  };
  const recorded = (e: { previous: ReadonlyMap<string, Buffer | null> }) =>
    Object.fromEntries([...e.previous].map(([k, v]) => [k, v === null ? null : v.toString()]));
  const historyBytes = async (userId: string) => {
    const lists = [keys.playerHistory(ws, userId), keys.playerHistoryCoarse(ws, userId)];
    const all = (await Promise.all(lists.map((l) => redis.lrangeBuffer(l, 0, -1)))).flat();
    return all.reduce((sum, e) => sum + e.length, 0);
  };

  it('keeps a restore point per interval: the first write of each key records what it replaces, later ones nothing', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const w = (ops: PlayerWrite['ops'], at: number) => points.write(ws, '3', { ops }, { nowMs: at, kind: 'set', actor: 'key:k1' });
    // The first write records the player before it: version 0, the keys it creates absent.
    await w([set('a', 1)], T0 + 1000);
    expect((await elements('3')).map((e) => [e.pointId, e.version, e.timeMs, e.kind, e.by, recorded(e)])).to.deep.equal([
      [T0, 0, T0 + 1000, 'set', 'key:k1', { a: null }],
    ]);
    // Later writes of the same key in the interval record nothing...
    const before = await redis.llen(keys.playerHistory(ws, '3'));
    for (let i = 2; i <= 5; i++) {
      const reply = applied((await w([set('a', i)], T0 + i * 1000)).reply);
      expect(reply.storage.historyBytes, `write ${i}`).to.equal(0);
    }
    expect(await redis.llen(keys.playerHistory(ws, '3'))).to.equal(before);
    // ...a key first changed later in the interval is recorded by that change, in the same point.
    await w([set('a', 6), set('b', 'x')], T0 + 6000);
    expect((await elements('3')).map((e) => [e.pointId, e.version, recorded(e)])).to.deep.equal([
      [T0, 0, { b: null }],
      [T0, 0, { a: null }],
    ]);
    // The next interval's first write opens a point at the version its interval started with.
    await w([set('a', 7)], T0 + 5 * MINUTE + 10);
    const [newest] = await elements('3');
    expect([newest!.pointId, newest!.version, recorded(newest!)]).to.deep.equal([T0 + 5 * MINUTE, 6, { a: encodeEntry('6', T0 + 6000) }]);
    expect((await meta('3')).history).to.equal(await historyBytes('3'));
  });

  it('never opens a point older than the open one (an instance whose clock is behind)', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const w = (value: number, at: number) => points.write(ws, '8', { ops: [set('a', value)] }, { nowMs: at, kind: 'set', actor: 'a' });
    await w(1, T0 + 5 * MINUTE + 1);
    await w(2, T0 + 5 * MINUTE - 1); // 2 ms behind, across the boundary
    expect((await elements('8')).map((e) => [e.pointId, e.version])).to.deep.equal([[T0 + 5 * MINUTE, 0]]);
  });

  it('drops whole points, oldest first, past the most points, the age limit or the byte budget; the newest stays', async () => {
    const w = (store: PlayerDataStore, userId: string, value: string, at: number) =>
      store.write(ws, userId, { ops: [set('a', value)] }, { nowMs: at, kind: 'set', actor: 'a' });
    const byCount = new PlayerDataStore(redis, { ...LIMITS, history: { ...POINTS, maxVersions: 3 } });
    for (let i = 0; i < 6; i++) await w(byCount, '4', `v${i}`, T0 + i * 5 * MINUTE);
    expect((await elements('4')).map((e) => e.version)).to.deep.equal([5, 4, 3]);
    expect((await meta('4')).history).to.equal(await historyBytes('4'));

    const byBytes = new PlayerDataStore(redis, { ...LIMITS, history: { ...POINTS, maxBytes: 300 } });
    for (let i = 0; i < 3; i++) await w(byBytes, '5', 'y'.repeat(100 + i), T0 + i * 5 * MINUTE);
    // Points of about 180 bytes: two do not fit in 300, so only the newest stays.
    expect((await elements('5')).map((e) => e.version)).to.deep.equal([2]);
    const big = 'z'.repeat(1000);
    await w(byBytes, '5', big, T0 + 3 * 5 * MINUTE);
    await w(byBytes, '5', 'small', T0 + 4 * 5 * MINUTE);
    // The newest point is kept whatever its size.
    expect((await elements('5')).map((e) => e.version)).to.deep.equal([4]);
    expect((await meta('5')).history).to.equal(await historyBytes('5'));

    const byAge = new PlayerDataStore(redis, { ...LIMITS, history: { ...POINTS, fineMs: 100 * HOUR, maxAgeMs: 2 * HOUR } });
    for (const at of [0, 0.9, 2.5, 3].map((h) => T0 + h * HOUR)) await w(byAge, '6', String(at), at);
    // At 3 h, points older than 1 h (0 h and 0.9 h) are gone.
    expect((await elements('6')).map((e) => e.pointId)).to.deep.equal([T0 + 3 * HOUR, T0 + 2.5 * HOUR]);
  });

  it('thins points older than the fine window to the first of each UTC hour, merging the later ones into it exactly', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const w = (ops: PlayerWrite['ops'], at: number) => points.write(ws, '7', { ops }, { nowMs: at, kind: 'set', actor: 'a' });
    await w([set('a', 'a0'), set('b', 'b0')], T0 + 1); // point v0 at T0
    await w([set('a', 'a1')], T0 + 10 * MINUTE); // point v1: a was a0
    await w([set('c', 'c1')], T0 + 20 * MINUTE); // point v2: c absent
    await w([set('b', 'b1')], T0 + 70 * MINUTE); // point v3 in the next hour: b was b0
    // 3 h later every one of them is past the 2 h window: the first hour's three points become
    // one (version 0), the next hour's stays its own.
    await w([set('a', 'late')], T0 + 3 * HOUR + 70 * MINUTE);
    expect((await elements('7')).map((e) => e.version)).to.deep.equal([4]);
    const coarse = await elements('7', 'coarse');
    expect(coarse.map((e) => [e.pointId, e.version, recorded(e)])).to.deep.equal([
      [T0 + 70 * MINUTE - (70 * MINUTE) % (5 * MINUTE), 3, { b: encodeEntry('"b0"', T0 + 1) }],
      [T0, 0, { a: null, b: null, c: null }],
    ]);
    expect((await meta('7')).history).to.equal(await historyBytes('7'));
  });

  it('thins points older than HISTORY_HOURLY_HOURS to the first of each UTC day, merging the later ones into it exactly', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: { ...POINTS, hourlyMs: 6 * HOUR } });
    const w = (ops: PlayerWrite['ops'], at: number) => points.write(ws, '11', { ops }, { nowMs: at, kind: 'set', actor: 'a' });
    const D0 = Math.floor(T0 / (24 * HOUR)) * 24 * HOUR;
    await w([set('z', 'z0')], D0 - 22 * HOUR); // point v0, the day before
    await w([set('a', 'a0'), set('b', 'b0')], D0 + HOUR); // point v1
    await w([set('a', 'a1')], D0 + 3 * HOUR); // point v2: a was a0
    await w([set('c', 'c1')], D0 + 5 * HOUR); // point v3: c absent
    // At 10 h, v0 is the only point past 6 h (and alone in its day); v1 and v2 are hourly ones.
    await w([set('y', 1)], D0 + 10 * HOUR); // point v4: y absent
    await w([set('b', 'b1')], D0 + 26 * HOUR); // point v5, the next day: b was b0
    // 40 h: every point but the newest is past the 6 h: day 0's (v1 to v4) become one, version
    // 1's, the other days' stay their own.
    await w([set('a', 'late')], D0 + 40 * HOUR);
    expect((await elements('11')).map((e) => e.version)).to.deep.equal([6]);
    const coarse = await elements('11', 'coarse');
    expect(coarse.map((e) => [e.pointId, e.version, recorded(e)])).to.deep.equal([
      [D0 + 26 * HOUR, 5, { b: encodeEntry('"b0"', D0 + HOUR) }],
      [D0 + HOUR, 1, { a: null, b: null, c: null, y: null }],
      [D0 - 22 * HOUR, 0, { z: null }],
    ]);
    const index = JSON.parse((await redis.hget(keys.playerHistoryMeta(ws, '11'), 'x'))!) as { c: number[][] };
    const lengths = (await redis.lrangeBuffer(keys.playerHistoryCoarse(ws, '11'), 0, -1)).map((e) => e.length);
    expect(index.c).to.deep.equal([[D0 + 26 * HOUR, 5, 1, lengths[0]], [D0 + HOUR, 1, 1, lengths[1]], [D0 - 22 * HOUR, 0, 1, lengths[2]]]);
    expect((await meta('11')).history).to.equal(await historyBytes('11'));
  });

  it('keeps the keys recorded in the open point in one field, reset by the next point: in the player hash while within 64 bytes, else in the index key', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const w = (ops: PlayerWrite['ops'], at: number) => points.write(ws, '12', { ops }, { nowMs: at, kind: 'set', actor: 'a' }).then((r) => applied(r.reply));
    const hash = keys.player(ws, '12');
    const inHash = () => redis.hget(hash, '\0k');
    const inIndexKey = () => redis.hget(keys.playerHistoryMeta(ws, '12'), 'k');
    const marks = async () => (await redis.hkeys(hash)).filter((f) => f.startsWith('\0r'));
    await w([set('a', 1), set('ü', 1)], T0 + 1000);
    expect(await inHash()).to.equal(`${T0}\0a\0ü\0`);
    // A key already recorded records nothing; a key first changed now is recorded and listed.
    expect((await w([set('a', 2)], T0 + 2000)).storage.historyBytes).to.equal(0);
    expect((await w([set('a', 3), set('b', 1)], T0 + 3000)).storage.historyBytes).to.be.above(0);
    expect((await w([set('b', 2), set('ü', 2)], T0 + 4000)).storage.historyBytes).to.equal(0);
    expect(await inHash()).to.equal(`${T0}\0a\0ü\0b\0`);
    expect(await inIndexKey()).to.equal(null);
    // The player hash holds the open point only: no field a key.
    expect(await marks()).to.deep.equal(['\0r']);
    // Past 64 bytes the list moves to the index key (a longer value would cost the hash its
    // compact encoding), and is read from there.
    const long = 'l'.repeat(50);
    expect((await w([set(long, 1)], T0 + 5000)).storage.historyBytes).to.be.above(0);
    expect(await inHash()).to.equal(null);
    expect(await inIndexKey()).to.equal(`${T0}\0a\0ü\0b\0${long}\0`);
    expect((await w([set(long, 2), set('a', 4)], T0 + 6000)).storage.historyBytes).to.equal(0);
    expect((await w([set('c', 1)], T0 + 7000)).storage.historyBytes).to.be.above(0);
    expect(await inIndexKey()).to.equal(`${T0}\0a\0ü\0b\0${long}\0c\0`);
    // The next point starts a new list, back in the hash.
    await w([set('b', 3)], T0 + 5 * MINUTE);
    expect(await inHash()).to.equal(`${T0 + 5 * MINUTE}\0b\0`);
    expect(await inIndexKey()).to.equal(null);
    await w([set(long, 3)], T0 + 10 * MINUTE);
    expect([await inHash(), await inIndexKey()]).to.deep.equal([null, `${T0 + 10 * MINUTE}\0${long}\0`]);
    expect((await meta('12')).history).to.equal(await historyBytes('12'));
  });

  it('reads the marks a point opened by the release before keeps per key (\\0r<key>), and deletes them when the next point opens', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const w = (ops: PlayerWrite['ops'], at: number, deleteAll = false) =>
      points.write(ws, '13', { ops, deleteAll }, { nowMs: at, kind: 'set', actor: 'a' }).then((r) => applied(r.reply));
    const hash = keys.player(ws, '13');
    await w([set('a', 1), set('b', 1)], T0 + 1000);
    // The same player as the release before left it: a mark per key, none in the index key (and
    // an old mark of a key deleted since).
    await redis.hdel(hash, '\0k');
    await redis.hset(hash, '\0ra', String(T0), '\0rb', String(T0), '\0rgone', String(T0 - HOUR));
    expect((await w([set('a', 2)], T0 + 2000)).storage.historyBytes).to.equal(0);
    // A key without its mark is recorded, and marked as the release before did.
    expect((await w([set('c', 1)], T0 + 3000)).storage.historyBytes).to.be.above(0);
    expect(await redis.hget(hash, '\0rc')).to.equal(String(T0));
    expect(await redis.hexists(hash, '\0k')).to.equal(0);
    // A delete of everything reads the marks from the whole hash: a, b and c recorded already.
    expect((await w([], T0 + 4000, true)).storage.historyBytes).to.equal(0);
    expect((await elements('13')).map((e) => Object.keys(recorded(e)))).to.deep.equal([['c'], ['a', 'b']]);
    // The next point: the marks go, the keys are listed in one field.
    await w([set('a', 5)], T0 + 5 * MINUTE);
    expect((await redis.hkeys(hash)).filter((f) => f.startsWith('\0r'))).to.deep.equal(['\0r']);
    expect(await redis.hget(hash, '\0k')).to.equal(`${T0 + 5 * MINUTE}\0a\0`);
    expect((await meta('13')).history).to.equal(await historyBytes('13'));
  });

  it('reads history written before restore points as points of their own, and indexes it once', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const hash = keys.player(ws, '9');
    const older = (v: number, prev: string) => {
      const header = JSON.stringify({ v, t: T0 + v, k: 'set', by: 'key:old', keys: ['a'], lens: [prev.length] });
      return `${header}\n${prev}`;
    };
    const list = [older(3, encodeEntry('2', T0)), older(2, encodeEntry('1', T0))];
    await redis.rpush(keys.playerHistory(ws, '9'), ...list);
    const hBytes = list.reduce((sum, e) => sum + Buffer.byteLength(e), 0);
    await redis.hset(hash, 'a', encodeEntry('3', T0), '\0v', 3, '\0n', 1, '\0b', 1 + encodeEntry('3', T0).length, '\0h', hBytes, '\0t', T0 + 2);
    expect((await elements('9')).map((e) => [e.pointId, e.version])).to.deep.equal([[T0 + 3, 2], [T0 + 2, 1]]);
    await points.write(ws, '9', { ops: [set('a', 4)] }, { nowMs: T0 + HOUR, kind: 'set', actor: 'a' });
    expect((await elements('9')).map((e) => e.version)).to.deep.equal([3, 2, 1]);
    expect(JSON.parse((await redis.hget(keys.playerHistoryMeta(ws, '9'), 'x'))!)).to.deep.equal({
      f: [[T0 + HOUR, 3, 1, (await redis.lindex(keys.playerHistory(ws, '9'), 0))!.length], [T0 + 3, 2, 1, Buffer.byteLength(list[0]!)], [T0 + 2, 1, 1, Buffer.byteLength(list[1]!)]],
      c: {},
    });
    expect(await redis.hexists(hash, '\0t')).to.equal(0);
    expect((await meta('9')).history).to.equal(await historyBytes('9'));
  });

  it('reports the bytes it read or copied inside Redis (workBytes), for the byte budget', async () => {
    const points = new PlayerDataStore(redis, { ...LIMITS, history: POINTS });
    const value = 'w'.repeat(5000);
    const w = (ops: PlayerWrite['ops'], at: number, deleteAll = false) =>
      points.write(ws, '10', { ops, deleteAll }, { nowMs: at, kind: 'set', actor: 'a' }).then((r) => applied(r.reply));
    await w([set('a', value)], T0);
    const stored = encodeEntry(JSON.stringify(value), T0).length;
    // Replacing it in a new interval reads it and copies it into the history.
    const replaced = await w([set('a', 1)], T0 + 5 * MINUTE);
    expect(replaced.workBytes).to.be.at.least(2 * stored);
    // Again in the same interval: only the small entry it replaces.
    expect((await w([set('a', 2)], T0 + 5 * MINUTE + 1)).workBytes).to.be.below(100);
    await w([set('a', value)], T0 + 5 * MINUTE + 2);
    // Everything deleted: every field read, and a's entry copied into the history at most once.
    expect((await w([], T0 + 5 * MINUTE + 3, true)).workBytes).to.be.at.least(stored);
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
    expect(reply.reply).to.deep.equal({ applied: true, version: 0, storage: { dataBytes: 0, players: 0, historyBytes: 0 }, workBytes: 0, messages: { acknowledged: [], delivered: [] }, results: ['0'] });
    expect(await redis.exists(keys.player(ws, '6'))).to.equal(0);
  });
});
