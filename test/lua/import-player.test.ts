// lua/import-player.lua directly: a new player keeps the imported version and updated_at; skip
// keeps an existing player; overwrite replaces it with a version past its own (so a stale
// ifVersion never matches) and is a no-op on a re-run; limits and live sessions refuse the
// player whole; the deltas it answers match the bytes and players stored.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { PlayerDataStore } from '../../src/store/players/player-data.js';
import type { ImportReply, PlayerLimits } from '../../src/store/players/script-protocol.js';
import { ErrorCode } from '../../src/errors.js';
import { importPlayer } from '../../src/store/players/player-transfer.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const LIMITS: PlayerLimits = {
  maxKeysPerPlayer: 3,
  maxPlayerBytes: 200,
  idempotencyTtlSeconds: 60,
  history: { intervalMs: 300_000, maxVersions: 5, fineMs: 86_400_000, hourlyMs: 168 * 3_600_000, maxAgeMs: 3_600_000, maxBytes: 10_000 },
};

describe('lua/import-player.lua', () => {
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

  const fields = (data: Record<string, [unknown, number]>) => Object.entries(data).flatMap(([k, [v, at]]) => [k, encodeEntry(JSON.stringify(v), at)]);
  const imp = (userId: string, version: number, f: string[], mode: 'skip' | 'overwrite' = 'skip') => importPlayer(redis, ws, userId, version, f, mode, LIMITS);
  const meta = async (userId: string) => {
    const [v, n, b] = await redis.hmget(keys.player(ws, userId), '\0v', '\0n', '\0b');
    return { version: Number(v), keys: Number(n), bytes: Number(b) };
  };
  const bytesOf = (f: string[]) => f.reduce((sum, s) => sum + Buffer.byteLength(s), 0);
  const done = (status: 'imported' | 'replaced' | 'skipped' | 'unchanged', version: number, dataBytes = 0, players = 0, historyBytes = 0): ImportReply => ({
    applied: true,
    status,
    version,
    storage: { dataBytes, players, historyBytes },
  });
  const statusOf = (reply: ImportReply) => (reply.applied ? reply.status : reply.refusal.code);

  it('writes a new player with its own version and updated_at, and answers the deltas', async () => {
    const f = fields({ coins: [10, 1_700_000_000_123], name: ['é', 1_700_000_000_000] });
    expect(await imp('1', 7, f)).to.deep.equal(done('imported', 7, bytesOf(f), 1, 0));
    expect(await meta('1')).to.deep.equal({ version: 7, keys: 2, bytes: bytesOf(f) });
    const read = await store.readAll(ws, '1');
    expect(read).to.deep.include({ complete: true, version: 7 });
    expect(read.complete && read.entries).to.deep.equal([
      ['coins', { updatedAtMs: 1_700_000_000_123, valueJson: '10' }],
      ['name', { updatedAtMs: 1_700_000_000_000, valueJson: '"é"' }],
    ]);
  });

  it('skip keeps an existing player untouched', async () => {
    await imp('1', 3, fields({ a: [1, 1] }));
    expect(statusOf(await imp('1', 9, fields({ b: [2, 2] })))).to.equal('skipped');
    expect(await redis.hget(keys.player(ws, '1'), 'b')).to.equal(null);
    expect((await meta('1')).version).to.equal(3);
  });

  it('overwrite replaces every key, moves the version past the current one, drops the history, and is a no-op on a re-run', async () => {
    const now = Date.now();
    await store.write(ws, '1', { ops: [{ op: 'set', key: 'a', valueJson: '1' }] }, { nowMs: now, kind: 'set', actor: 't' });
    await store.write(ws, '1', { ops: [{ op: 'set', key: 'old', valueJson: '"x"' }] }, { nowMs: now, kind: 'set', actor: 't' });
    // One restore point (version 0) in two elements: the second key was first written later in its interval.
    expect(await redis.llen(keys.playerHistory(ws, '1'))).to.equal(2);
    const before = await meta('1');
    const [hBytes] = await redis.hmget(keys.player(ws, '1'), '\0h');
    const f = fields({ b: [2, 5] });
    // The imported version (1) is below the current (2): the version moves to 3, not back.
    const reply = await imp('1', 1, f, 'overwrite');
    expect(reply).to.deep.equal(done('replaced', 3, bytesOf(f) - before.bytes, 0, -Number(hBytes)));
    expect(await redis.hkeys(keys.player(ws, '1'))).to.have.members(['\0v', '\0n', '\0b', 'b']);
    expect(await redis.exists(keys.playerHistory(ws, '1'), keys.playerHistoryCoarse(ws, '1'), keys.playerHistoryMeta(ws, '1'))).to.equal(0);
    expect(await imp('1', 1, f, 'overwrite')).to.deep.equal(done('unchanged', 3));
    // A higher imported version is kept as it is.
    expect(await imp('1', 40, fields({ c: [3, 5] }), 'overwrite')).to.deep.include({ status: 'replaced', version: 40 });
  });

  it('a player whose data was deleted takes the import, with a version past the one it had', async () => {
    const now = Date.now();
    await store.write(ws, '1', { ops: [{ op: 'set', key: 'a', valueJson: '1' }] }, { nowMs: now, kind: 'set', actor: 't' });
    await store.write(ws, '1', { ops: [], deleteAll: true }, { nowMs: now, kind: 'delete', actor: 't' });
    expect((await meta('1')).version).to.equal(2);
    expect(await imp('1', 1, fields({ b: [1, 1] }))).to.deep.include({ applied: true, version: 3 });
    expect((await meta('1')).keys).to.equal(1);
  });

  it('keeps the version of a player exported with no data (a deleted one)', async () => {
    expect(await imp('1', 5, [])).to.deep.equal(done('imported', 5));
    expect(await store.readAll(ws, '1')).to.deep.equal({ complete: true, version: 5, entries: [] });
    expect(statusOf(await imp('2', 0, []))).to.equal('unchanged');
    expect(await redis.exists(keys.player(ws, '2'))).to.equal(0);
  });

  it('refuses a player over the key or byte limit, writing nothing', async () => {
    const many = fields({ a: [1, 1], b: [1, 1], c: [1, 1], d: [1, 1] });
    expect(await imp('1', 1, many)).to.deep.equal({ applied: false, refusal: { code: ErrorCode.TOO_MANY_KEYS, version: 0, keys: 4 } });
    const big = fields({ a: ['x'.repeat(300), 1] });
    expect(await imp('1', 1, big)).to.deep.include({ applied: false }).and.nested.include({ 'refusal.code': ErrorCode.PLAYER_TOO_LARGE, 'refusal.version': 0 });
    expect(await redis.exists(keys.player(ws, '1'))).to.equal(0);
  });

  it('refuses a player held by a live session, in any mode; an expired session is dropped', async () => {
    await store.session(ws, '1', { action: 'acquire', sessionId: 's1', owner: 'job-1', ttlMs: 60_000 });
    const reply = await imp('1', 1, fields({ a: [1, 1] }), 'overwrite');
    expect(reply).to.nested.include({ applied: false, 'refusal.code': ErrorCode.SESSION_LOCKED, 'refusal.version': 0, 'refusal.owner': 'job-1' });
    expect(await redis.hget(keys.player(ws, '1'), 'a')).to.equal(null);
    await redis.hset(keys.player(ws, '2'), '\0s', `s2|${Date.now() - 1000}|60000|job-2`);
    expect(statusOf(await imp('2', 1, fields({ a: [1, 1] })))).to.equal('imported');
    expect(await redis.hget(keys.player(ws, '2'), '\0s')).to.equal(null);
  });

  it('counts a player written before versions existed once it is overwritten', async () => {
    await redis.hset(keys.player(ws, '1'), 'a', encodeEntry('1', 1));
    expect(statusOf(await imp('1', 1, fields({ a: [1, 1] })))).to.equal('skipped');
    const f = fields({ b: [2, 2] });
    expect(await imp('1', 1, f, 'overwrite')).to.deep.equal(done('replaced', 2, bytesOf(f), 1, 0));
  });
});
