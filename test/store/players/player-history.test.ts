import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { PlayerDataStore } from '../../../src/store/players/player-data.js';
import type { PlayerWrite } from '../../../src/store/players/script-protocol.js';
import { parseHistoryEntry, rebuildAt } from '../../../src/store/players/player-history.js';
import { keys } from '../../../src/store/keys.js';
import { testRedisSource } from '../../support/hooks.js';
import { randomId } from '../../support/random.js';
import { testRedis } from '../../support/service.js';

function entry(v: number, prev: Record<string, string | null>): Buffer {
  const keys = Object.keys(prev);
  const lens = keys.map((k) => (prev[k] === null ? -1 : Buffer.byteLength(prev[k]!)));
  const header = JSON.stringify({ v, t: 1000 + v, k: 'set', by: 'key:abc', keys, lens });
  return Buffer.concat([Buffer.from(header + '\n'), ...keys.map((k) => Buffer.from(prev[k] ?? ''))]);
}

describe('store/player-history', () => {
  it('splits replaced entries by byte length, multi-byte text included', () => {
    const e = parseHistoryEntry(entry(3, { a: 'héllo\nx', b: null, c: '€' }));
    expect(e.version).to.equal(3);
    expect(e.previous.get('a')!.toString()).to.equal('héllo\nx');
    expect(e.previous.get('b')).to.equal(null);
    expect(e.previous.get('c')!.toString()).to.equal('€');
  });

  it('undoes newest first down to the target, and refuses a gap', () => {
    const current = new Map([['a', Buffer.from('3')], ['b', Buffer.from('new')]]);
    const list = [entry(3, { a: '2' }), entry(2, { a: '1', b: null })].map(parseHistoryEntry);
    const at = (n: number) => {
      const m = rebuildAt(current, 3, list, n);
      return m && Object.fromEntries([...m].map(([k, v]) => [k, v.toString()]));
    };
    expect(at(3)).to.deep.equal({ a: '3', b: 'new' });
    expect(at(2)).to.deep.equal({ a: '2', b: 'new' });
    expect(at(1)).to.deep.equal({ a: '1' });
    expect(at(0)).to.deep.equal({});
    expect(rebuildAt(current, 3, list.slice(1), 2)).to.equal(null);
    expect(rebuildAt(current, 3, list.slice(0, 1), 0)).to.equal(null);
    expect(at(4)).to.equal(null);
  });
});

describe('store/player-history against Redis (snapshot + rebuild)', () => {
  let redis: Redis;
  let store: PlayerDataStore;
  before(() => {
    redis = testRedis();
    store = new PlayerDataStore(redis, {
      maxKeysPerPlayer: 100, maxPlayerBytes: 1_000_000, idempotencyTtlSeconds: 60,
      history: { maxVersions: 3, maxAgeMs: 3_600_000, maxBytes: 100_000 },
    });
  });
  after(() => redis.disconnect());

  it('rebuilds each retained version as it was stored, and not one trimmed away', async () => {
    const ws = `ws_${randomId()}`;
    const seen: Array<Record<string, string>> = [{}];
    const write = async (ops: PlayerWrite['ops'], deleteAll = false) => {
      await store.write(ws, 'u', { ops, deleteAll }, { nowMs: Date.now(), kind: 'test', actor: 'key:k1' });
      const s = await store.snapshot(ws, 'u');
      seen[s.version] = Object.fromEntries([...s.data].map(([k, v]) => [k, v.toString()]));
    };
    const set = (key: string, value: unknown) => ({ op: 'set' as const, key, valueJson: JSON.stringify(value) });
    await write([set('a', 'ü'), set('b', 1)]);
    await write([set('a', 'é€'), { op: 'delete', key: 'b' }]);
    await write([], true);
    await write([set('c', [1])]);
    await write([set('a', 2)]);
    const s = await store.snapshot(ws, 'u');
    expect(s.version).to.equal(5);
    const entries = s.history.map(parseHistoryEntry);
    for (const v of [5, 4, 3, 2]) {
      const m = rebuildAt(s.data, s.version, entries, v);
      expect(m && Object.fromEntries([...m].map(([k, b]) => [k, b.toString()])), `v${v}`).to.deep.equal(seen[v]);
    }
    expect(rebuildAt(s.data, s.version, entries, 1)).to.equal(null);
  });
});

describe('store/player-history in compressed list nodes (list-compress-depth 1, src/dev/local-redis.ts)', () => {
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('keeps 50 saves of a 1 KB inventory in under half their bytes, and rebuilds every version exactly', async function () {
    if (testRedisSource() === 'REDIS_URL') this.skip(); // a Redis we did not start keeps its own settings
    expect((await redis.config('GET', 'list-compress-depth'))[1]).to.equal('1');
    const store = new PlayerDataStore(redis, {
      maxKeysPerPlayer: 100, maxPlayerBytes: 1_000_000, idempotencyTtlSeconds: 60,
      history: { maxVersions: 50, maxAgeMs: 3_600_000, maxBytes: 1_000_000 },
    });
    const ws = `ws_${randomId()}`;
    const inventory = (n: number) => JSON.stringify({ items: Array.from({ length: 30 }, (_, i) => ({ id: 1000 + i, qty: (n * 7 + i) % 50, name: `item${i}` })) });
    const seen: string[] = [];
    for (let n = 0; n <= 50; n++) {
      await store.write(ws, 'u', { ops: [{ op: 'set', key: 'inventory', valueJson: inventory(n) }] }, { nowMs: Date.now(), kind: 'set', actor: 'key:k1' });
      seen[n + 1] = inventory(n);
    }
    const s = await store.snapshot(ws, 'u');
    expect(s.version).to.equal(51);
    expect(s.history).to.have.length(50);
    const stored = s.history.reduce((sum, e) => sum + e.length, 0);
    const used = Number(await redis.memory('USAGE', keys.playerHistory(ws, 'u'), 'SAMPLES', 0));
    expect(used, `MEMORY USAGE ${used} B for ${stored} B of entries`).to.be.below(stored / 2);
    const entries = s.history.map(parseHistoryEntry);
    for (let v = 51; v >= 1; v--) {
      const m = rebuildAt(s.data, s.version, entries, v);
      const value = m?.get('inventory')?.toString() ?? '';
      expect(value.slice(value.indexOf(',') + 1, -1), `v${v}`).to.equal(seen[v]);
    }
  });
});
