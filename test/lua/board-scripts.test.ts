// The leaderboard scripts, called as the store calls them, for what the store's tests do not
// reach: the members and meta they keep, the idempotency prologue, refusals that write nothing,
// the periods check, TTLs set once, ties found by member when a page's cursor moved, the
// registry's limit and changes, reset and drop, and an import's tie order.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { BoardRegistry } from '../../src/store/boards/board-registry.js';
import { LeaderboardStore } from '../../src/store/boards/leaderboard-store.js';
import { writeBoardEntries } from '../../src/store/boards/board-transfer.js';
import { periodAt } from '../../src/domain/periods.js';
import { decodeCursor } from '../../src/domain/leaderboard.js';
import { randomId } from '../support/random.js';
import { testRedis } from '../support/service.js';

const T0 = Date.UTC(2031, 2, 4, 10);

describe('leaderboard scripts', () => {
  let redis: Redis;
  let store: LeaderboardStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new LeaderboardStore(redis, new BoardRegistry(redis, 3), { maxEntries: 100, idempotencyTtlSeconds: 60 });
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const all = (board: string) => keys.boardScores(ws, board, 'all');

  describe('lua/board-write.lua', () => {
    it('keeps an 8-character inverted sequence code before the user id, and the code in the member hash', async () => {
      await store.write(ws, 'b', 'u1', { op: 'set', score: 1 }, { nowMs: T0 });
      await store.write(ws, 'b', 'u2', { op: 'set', score: 1 }, { nowMs: T0 });
      const members = await redis.zrange(all('b'), '0', '-1');
      expect(members.map((m) => m.slice(8))).to.deep.equal(['u2', 'u1']);
      expect(members[0]! < members[1]!, 'an earlier write has the larger code').to.equal(true);
      expect(await redis.hget(keys.boardMembers(ws, 'b', 'all'), 'u1')).to.equal(members[1]!.slice(0, 8));
      expect(await redis.hmget(keys.boardMeta(ws, 'b'), 'p', 's', 'n')).to.deep.equal(['all', '2', '2']);
    });

    it('replays a kept answer for the same fingerprint, refuses another (-8), and records nothing for a stale periods list', async () => {
      const idem = { keyHash: 'h1', fingerprint: 'fp1' };
      const first = await store.write(ws, 'b', 'u', { op: 'increment', amount: 2 }, { nowMs: T0, idempotency: idem });
      const again = await store.write(ws, 'b', 'u', { op: 'increment', amount: 2 }, { nowMs: T0, idempotency: idem });
      expect(again).to.deep.equal({ ...first, replayed: true });
      expect(await redis.zscore(all('b'), (await redis.zrange(all('b'), '0', '0'))[0]!)).to.equal('2');
      const reused = await store.write(ws, 'b', 'u', { op: 'increment', amount: 3 }, { nowMs: T0, idempotency: { keyHash: 'h1', fingerprint: 'fp2' } });
      expect(reused).to.deep.include({ status: 'refused', refusal: { code: 'IDEMPOTENCY_KEY_REUSED' } });
      // Called with periods the board does not keep: -2 and nothing kept under the key.
      const raw = await redis.boardWrite(
        5,
        keys.boardMeta(ws, 'b'),
        keys.boardIdempotency(ws, 'b', 'h2'),
        keys.boardFollowed(ws, 'b'),
        keys.boardScores(ws, 'b', '2031-03-04'),
        keys.boardMembers(ws, 'b', '2031-03-04'),
        'i', 'u', '1', 'daily', '1000', '100 60', 'fp3', '',
      );
      expect(raw).to.deep.equal([-2, 'all']);
      expect(await redis.exists(keys.boardIdempotency(ws, 'b', 'h2'), keys.boardScores(ws, 'b', '2031-03-04'))).to.equal(0);
    });

    it('an unregistered board writes nothing (-1); a delete there answers 0 and leaves no meta', async () => {
      const raw = await redis.boardWrite(5, keys.boardMeta(ws, 'new'), keys.boardIdempotency(ws, 'new', '-'), keys.boardFollowed(ws, 'new'), all('new'), keys.boardMembers(ws, 'new', 'all'), 's', 'u', '5', 'all', '0', '100 60', '', '');
      expect(raw).to.deep.equal([-1]);
      expect(await store.write(ws, 'new', 'u', { op: 'delete' }, { nowMs: T0 })).to.deep.equal({ status: 'deleted', deleted: false, entriesDelta: 0, replayed: false });
      expect(await redis.exists(keys.boardMeta(ws, 'new'), all('new'))).to.equal(0);
    });

    it("sets a period's TTL when its keys are created, and not again", async () => {
      await store.registry.register(ws, 'd', T0, { field: 'periods', periods: ['daily'] });
      await store.write(ws, 'd', 'u', { op: 'set', score: 1 }, { nowMs: T0 });
      const day = keys.boardScores(ws, 'd', '2031-03-04');
      const expected = Date.UTC(2031, 2, 6) - T0;
      expect(await redis.pttl(day)).to.be.within(expected - 5000, expected);
      await redis.pexpire(day, 123_456_789);
      await store.write(ws, 'd', 'v', { op: 'set', score: 2 }, { nowMs: T0 });
      expect(await redis.pttl(day)).to.be.above(123_000_000);
      expect(await redis.pttl(keys.boardMembers(ws, 'd', '2031-03-04'))).to.be.within(expected - 5000, expected);
    });

    it('a refusal in one period writes nothing in any (every check before the first write)', async () => {
      const small = new LeaderboardStore(redis, new BoardRegistry(redis, 3), { maxEntries: 1, idempotencyTtlSeconds: 60 });
      await small.registry.register(ws, 'f', T0, { field: 'periods', periods: ['all', 'daily'] });
      await small.write(ws, 'f', 'a', { op: 'set', score: 1 }, { nowMs: T0 });
      // 'b' would be the second entry of both periods: refused in all-time, so not written in today's either.
      expect(await small.write(ws, 'f', 'b', { op: 'set', score: 1 }, { nowMs: T0 })).to.deep.include({ status: 'refused', refusal: { code: 'BOARD_FULL', period: 'all' } });
      expect(await redis.zcard(keys.boardScores(ws, 'f', '2031-03-04'))).to.equal(1);
      expect(await redis.hget(keys.boardMeta(ws, 'f'), 's')).to.equal('1');
    });
  });

  describe('lua/board-page.lua', () => {
    it('finds the place of a cursor whose entry left, among many equal scores, by member', async () => {
      for (let i = 0; i < 40; i++) await store.write(ws, 'p', `u${i}`, { op: 'set', score: 10 }, { nowMs: T0 });
      const order = (await store.page(ws, 'p', { period: 'all', previous: false, order: 'desc', limit: 100 }, T0));
      if (!order.kept) throw new Error('not kept');
      const firstPage = await store.page(ws, 'p', { period: 'all', previous: false, order: 'desc', limit: 17 }, T0);
      if (!firstPage.kept) throw new Error('not kept');
      await store.write(ws, 'p', firstPage.entries[16]!.userId, { op: 'delete' }, { nowMs: T0 });
      const rest = await store.page(ws, 'p', { period: 'all', previous: false, order: 'desc', limit: 100, after: decodeCursor(firstPage.next!) }, T0);
      expect(rest.kept && rest.entries.map((e) => e.userId)).to.deep.equal(order.entries.slice(17).map((e) => e.userId));
      expect(rest.kept && rest.entries[0]!.rank).to.equal(17);
    });
  });

  describe('lua/board-rank.lua', () => {
    it('answers 0 for a player whose member hash entry points nowhere, and -2 for a period not kept', async () => {
      await store.write(ws, 'r', 'u', { op: 'set', score: 1 }, { nowMs: T0 });
      await redis.hset(keys.boardMembers(ws, 'r', 'all'), 'ghost', 'zzzzzzzz');
      expect(await redis.boardRank(keys.boardMeta(ws, 'r'), all('r'), keys.boardMembers(ws, 'r', 'all'), 'all', 'd', 'ghost', '0')).to.deep.equal([0]);
      const week = '2031-W10';
      expect(await redis.boardRank(keys.boardMeta(ws, 'r'), keys.boardScores(ws, 'r', week), keys.boardMembers(ws, 'r', week), 'weekly', 'd', 'u', '0')).to.deep.equal([-2, 'all']);
    });
  });

  describe('lua/board-register.lua', () => {
    it('registers within the most boards, changes one field, and removes one set to null', async () => {
      const registry = new BoardRegistry(redis, 2);
      expect(await registry.register(ws, 'a', T0)).to.deep.include({ ok: true, created: true });
      expect(await registry.register(ws, 'a', T0)).to.deep.include({ ok: true, created: false });
      await registry.register(ws, 'b', T0, { field: 'follow', key: 'coins' });
      expect(await registry.register(ws, 'c', T0)).to.deep.equal({ ok: false, boards: 2 });
      expect((await registry.get(ws, 'b'))?.follow).to.deep.equal({ key: 'coins' });
      await registry.register(ws, 'b', T0, { field: 'follow', key: null });
      expect(JSON.parse((await redis.hget(keys.boardRegistry(ws), 'b'))!)).to.not.have.property('follow');
      expect(await registry.followersOf(ws, 'coins')).to.deep.equal([]);
    });
  });

  describe('lua/board-reset.lua', () => {
    it('empties every period and the followed versions; keeps the sequence and periods, or drops the meta too', async () => {
      await store.registry.register(ws, 'z', T0, { field: 'periods', periods: ['all', 'monthly'] });
      await store.write(ws, 'z', 'a', { op: 'set', score: 1 }, { nowMs: T0 });
      await store.applyFollowed(ws, 'z', 'b', '2', 1, T0);
      expect(await store.reset(ws, 'z', T0)).to.deep.equal({ removed: 4, entriesDelta: -4 });
      expect(await redis.hmget(keys.boardMeta(ws, 'z'), 'p', 's', 'n')).to.deep.equal(['all monthly', '2', '0']);
      expect(await redis.exists(keys.boardFollowed(ws, 'z'), all('z'))).to.equal(0);
      await store.write(ws, 'z', 'a', { op: 'set', score: 1 }, { nowMs: T0 });
      expect(await store.reset(ws, 'z', T0, true)).to.deep.equal({ removed: 2, entriesDelta: -2 });
      expect(await redis.exists(keys.boardMeta(ws, 'z'))).to.equal(0);
    });
  });

  describe('lua/board-import.lua', () => {
    it('gives entries the next codes in the order given, so ties keep it; stops at the most entries', async () => {
      await store.registry.register(ws, 'i', T0);
      await store.syncMeta(ws, 'i', ['all'], true);
      const window = periodAt('all', T0);
      const first = await writeBoardEntries(redis, ws, 'i', window, [['c', '5'], ['a', '5'], ['b', '5']], 100, T0);
      expect(first).to.deep.equal({ written: 3, entriesDelta: 3, full: false });
      const page = await store.page(ws, 'i', { period: 'all', previous: false, order: 'desc', limit: 10 }, T0);
      expect(page.kept && page.entries.map((e) => e.userId)).to.deep.equal(['c', 'a', 'b']);
      const full = await writeBoardEntries(redis, ws, 'i', window, [['d', '1'], ['e', '1']], 4, T0);
      expect(full).to.deep.equal({ written: 1, entriesDelta: 1, full: true });
      expect(await redis.hget(keys.boardMeta(ws, 'i'), 'n')).to.equal('4');
      const gone = await writeBoardEntries(redis, ws, 'i', periodAt('daily', T0 - 3 * 86_400_000), [['x', '1']], 100, T0);
      expect(gone.written, 'a period over for good is not written').to.equal(0);
    });
  });
});
