// lua/history-sweep.lua directly: points past the retention leave without a write (the newest
// included), the player's \0h follows exactly, a second sweep drops nothing, shedding keeps the
// newest point; and write-player.lua's trim drops aged points but the one it has just opened.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore } from '../../src/store/players/player-data.js';
import type { PlayerLimits, PlayerWrite } from '../../src/store/players/script-protocol.js';
import { HistoryList } from '../../src/store/workspaces/history-list.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const MINUTE = 60_000;
const LIMITS: PlayerLimits = {
  maxKeysPerPlayer: 100,
  maxPlayerBytes: 1_000_000,
  idempotencyTtlSeconds: 60,
  history: { intervalMs: MINUTE, maxVersions: 1000, fineMs: 86_400_000, hourlyMs: 168 * 3_600_000, maxAgeMs: 60 * MINUTE, maxBytes: 1_000_000 },
};

describe('lua/history-sweep.lua', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  let list: HistoryList;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, LIMITS);
    list = new HistoryList(redis);
  });
  beforeEach(() => {
    ws = `ws_${randomId()}`;
  });
  after(() => redis.disconnect());

  const T0 = Date.UTC(2026, 10, 1);
  const write = (userId: string, w: PlayerWrite, nowMs: number) => store.write(ws, userId, w, { nowMs, kind: 'test', actor: 'key:k1' });
  const set = (key: string, value: unknown): PlayerWrite => ({ ops: [{ op: 'set', key, valueJson: JSON.stringify(value) }] });
  const historyKeys = (user: string) => [keys.playerHistory(ws, user), keys.playerHistoryCoarse(ws, user), keys.playerHistoryMeta(ws, user)];
  const h = async (user: string) => Number((await redis.hget(keys.player(ws, user), '\0h')) ?? 0);
  /** The versions of the player's points, newest first, from their index (`x`: [id, version, elements, bytes]). */
  const versions = async (user: string): Promise<number[]> => {
    const x = await redis.hget(keys.playerHistoryMeta(ws, user), 'x');
    if (x === null) return [];
    const index = JSON.parse(x) as { f: number[][] | object; c: number[][] | object };
    return [...(Array.isArray(index.f) ? index.f : []), ...(Array.isArray(index.c) ? index.c : [])].map((p) => p[1]!);
  };
  /** Players written at T0 + i minutes for i in `minutes`, each write one point. */
  async function played(user: string, minutes: number[]) {
    for (const m of minutes) await write(user, set(`k${m}`, 'v'.repeat(50)), T0 + m * MINUTE);
  }

  it('drops the points past the retention, then the newest too, and \\0h follows exactly', async () => {
    await played('a', [0, 10, 20]);
    const before = await h('a');
    expect(before).to.be.above(0);
    const points = async () => (await versions('a')).length;
    // 65 minutes later: the points of minutes 0 (and not 10, 20) are past an hour.
    const first = await list.sweep(ws, 'a', T0 + 5 * MINUTE, false);
    expect(first.left).to.equal(2);
    expect(first.dropped).to.be.above(0);
    expect(await h('a')).to.equal(before - first.dropped);
    expect(await points()).to.equal(2);
    // Every point past the retention, the newest included.
    const all = await list.sweep(ws, 'a', T0 + 21 * MINUTE, false);
    expect(all).to.deep.include({ left: 0, dropped: before - first.dropped });
    for (const key of historyKeys('a')) expect(await redis.exists(key), key).to.equal(0);
    const fields = await redis.hkeys(keys.player(ws, 'a'));
    expect(fields.filter((f) => f.startsWith('\0r') || f === '\0h')).to.deep.equal([]);
    // Twice: nothing more to drop, so nothing counted twice.
    expect(await list.sweep(ws, 'a', T0 + 21 * MINUTE, false)).to.deep.equal({ dropped: 0, left: 0, work: 0 });
    // The data stays; the next write opens a point as a first write does.
    expect(await redis.hget(keys.player(ws, 'a'), 'k20')).to.be.a('string');
    await write('a', set('k20', 'w'), T0 + 30 * MINUTE);
    expect(await h('a')).to.be.above(0);
    expect(await points()).to.equal(1);
  });

  it('drops the marks of either form with the last point: the open point\'s keys (\\0k) or a mark per key (the release before)', async () => {
    await played('m', [0, 10]);
    await played('n', [0, 10]);
    // Player n as the release before left it: a mark per key in its hash, none in the index key.
    await redis.hdel(keys.player(ws, 'n'), '\0k');
    await redis.hset(keys.player(ws, 'n'), '\0rk0', String(T0), '\0rk10', String(T0 + 10 * MINUTE));
    expect(await redis.hget(keys.player(ws, 'm'), '\0k')).to.equal(`${T0 + 10 * MINUTE}\0k10\0`);
    for (const user of ['m', 'n']) {
      const before = await h(user);
      expect(await list.sweep(ws, user, T0 + 11 * MINUTE, false)).to.deep.include({ left: 0, dropped: before });
      for (const key of historyKeys(user)) expect(await redis.exists(key), key).to.equal(0);
      expect((await redis.hkeys(keys.player(ws, user))).filter((f) => f.startsWith('\0r') || f === '\0k' || f === '\0h'), user).to.deep.equal([]);
    }
  });

  it('sheds all but the newest point', async () => {
    await played('b', [0, 10, 20, 30]);
    const shed = await list.sweep(ws, 'b', T0 - MINUTE, true);
    expect(shed.left).to.equal(1);
    expect(await versions('b')).to.deep.equal([3]);
    expect(await list.sweep(ws, 'b', T0 - MINUTE, true)).to.deep.include({ dropped: 0, left: 1 });
  });

  it('a write drops aged points but the one it opens, and keeps \\0h exact', async () => {
    await played('c', [0, 10]);
    // Two hours on: both earlier points are past the hour; the new one stays.
    await write('c', set('x', 1), T0 + 130 * MINUTE);
    expect(await versions('c')).to.deep.equal([2]);
    const element = (await redis.lrange(keys.playerHistory(ws, 'c'), 0, -1)).reduce((n, e) => n + Buffer.byteLength(e), 0);
    expect(await h('c')).to.equal(element);
  });
});
