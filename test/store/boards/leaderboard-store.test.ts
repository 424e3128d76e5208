// LeaderboardStore on a real Redis: ordering, ties (first to reach a score ranks higher, exactly,
// with scores exact up to 2^53), pages by cursor, periods across their boundaries with a clock
// the test sets, the most entries of a period, following a player key, and erasure.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { decodeCursor } from '../../../src/domain/leaderboard.js';
import { keys } from '../../../src/store/keys.js';
import { BoardRegistry } from '../../../src/store/boards/board-registry.js';
import { LeaderboardStore, type BoardOp, type PageQuery } from '../../../src/store/boards/leaderboard-store.js';
import { randomId } from '../../support/random.js';
import { testRedis } from '../../support/service.js';

const T0 = Date.UTC(2031, 0, 7, 12); // a Tuesday, noon UTC
const DAY = 86_400_000;

describe('LeaderboardStore', () => {
  let redis: Redis;
  let store: LeaderboardStore;
  let ws: string;
  before(() => {
    redis = testRedis();
    store = new LeaderboardStore(redis, new BoardRegistry(redis, 5), { maxEntries: 1000, idempotencyTtlSeconds: 60 });
  });
  beforeEach(() => {
    ws = randomId('ws');
  });
  after(() => redis.disconnect());

  const write = (board: string, userId: string, op: BoardOp, nowMs = T0) => store.write(ws, board, userId, op, { nowMs });
  const set = (board: string, userId: string, score: number, nowMs = T0) => write(board, userId, { op: 'set', score }, nowMs);
  const query = (q: Partial<PageQuery> = {}): PageQuery => ({ period: 'all', previous: false, order: 'desc', limit: 100, ...q });
  async function page(board: string, q: Partial<PageQuery> = {}, nowMs = T0) {
    const result = await store.page(ws, board, query(q), nowMs);
    if (!result.kept) throw new Error(`period not kept: ${result.periods.join(',')}`);
    return result;
  }
  const ids = async (board: string, q: Partial<PageQuery> = {}, nowMs = T0) => (await page(board, q, nowMs)).entries.map((e) => e.userId);

  it('orders by score, highest first, and ties by who reached the score first; asc is the exact reverse', async () => {
    await set('b', 'a', 10);
    await set('b', 'b', 30);
    await set('b', 'c', 20);
    await set('b', 'd', 20);
    await set('b', 'e', 20);
    // 'c' reached 20 first, then 'd', then 'e'; moving 'c' away and back makes it the last to reach 20.
    await set('b', 'c', 21);
    await set('b', 'c', 20);
    expect(await ids('b')).to.deep.equal(['b', 'd', 'e', 'c', 'a']);
    expect(await ids('b', { order: 'asc' })).to.deep.equal(['a', 'c', 'e', 'd', 'b']);
    const ranks = (await page('b')).entries.map((e) => [e.rank, e.score]);
    expect(ranks).to.deep.equal([[1, '30'], [2, '20'], [3, '20'], [4, '20'], [5, '10']]);
  });

  it('a set to the same score keeps the player where it was among its ties', async () => {
    await set('b', 'x', 5);
    await set('b', 'y', 5);
    const again = await set('b', 'x', 5);
    expect(again).to.include({ status: 'scored', changed: false });
    expect(await ids('b')).to.deep.equal(['x', 'y']);
  });

  it('keeps scores exact for integers up to 2^53, and fractions as doubles', async () => {
    const big = 2 ** 53;
    await set('b', 'big', big);
    await set('b', 'below', big - 1);
    await write('b', 'inc', { op: 'increment', amount: 0.1 });
    const reply = await write('b', 'inc', { op: 'increment', amount: 0.2 });
    expect(reply.status === 'scored' && Number(reply.scores[0]![1])).to.equal(0.1 + 0.2);
    const scores = (await page('b')).entries.map((e) => Number(e.score));
    expect(scores).to.deep.equal([big, big - 1, 0.1 + 0.2]);
  });

  it('increments from 0, refuses a result beyond the finite range and writes nothing', async () => {
    await write('b', 'p', { op: 'increment', amount: 1e308 });
    const refused = await write('b', 'p', { op: 'increment', amount: 1e308 });
    expect(refused).to.deep.include({ status: 'refused', refusal: { code: 'NUMBER_OUT_OF_RANGE', period: 'all' } });
    expect((await page('b')).entries).to.deep.equal([{ rank: 1, userId: 'p', score: '1e+308' }]);
  });

  it('pages with a cursor: every entry once, none skipped, within a score range', async () => {
    for (let i = 0; i < 25; i++) await set('b', `p${i}`, i % 7);
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const result = await page('b', { limit: 4, after: after === null ? undefined : decodeCursor(after) });
      seen.push(...result.entries.map((e) => e.userId));
      after = result.next;
      pages++;
    } while (after !== null);
    expect(pages).to.equal(7);
    expect(seen).to.deep.equal(await ids('b'));
    expect(new Set(seen).size).to.equal(25);
    const ranged = (await page('b', { min: 2, max: 4 })).entries;
    expect(ranged.map((e) => Number(e.score))).to.deep.equal([4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2]);
    expect(ranged[0]!.rank, 'ranks are ranks in the whole board').to.equal(7);
  });

  it("a page after a cursor whose entry moved starts where that entry was", async () => {
    for (const [user, score] of [['a', 50], ['b', 40], ['c', 40], ['d', 40], ['e', 30]] as const) await set('k', user, score);
    const first = await page('k', { limit: 2 });
    expect(first.entries.map((e) => e.userId)).to.deep.equal(['a', 'b']);
    await set('k', 'b', 100); // the cursor's entry jumps to the top
    const second = await page('k', { limit: 2, after: decodeCursor(first.next!) });
    expect(second.entries.map((e) => e.userId)).to.deep.equal(['c', 'd']);
    await set('k', 'd', 1); // and now the cursor's entry drops below the rest
    const third = await page('k', { limit: 2, after: decodeCursor(second.next!) });
    expect(third.entries.map((e) => e.userId)).to.deep.equal(['e', 'd']);
    // asc pages the same way from the other end
    const asc = await page('k', { limit: 2, order: 'asc' });
    await set('k', asc.entries[1]!.userId, 1000);
    expect((await page('k', { limit: 2, order: 'asc', after: decodeCursor(asc.next!) })).entries.map((e) => e.userId)).to.deep.equal(['c', 'a']);
  });

  it("answers a player's rank and score, with the entries around, in either order", async () => {
    for (let i = 1; i <= 9; i++) await set('b', `p${i}`, i * 10);
    const r = await store.rank(ws, 'b', 'p5', { period: 'all', previous: false, order: 'desc', around: 2 }, T0);
    expect(r).to.deep.include({ kept: true, found: true, rank: 5, score: '50' });
    expect(r.kept && r.found && r.entries.map((e) => [e.rank, e.userId])).to.deep.equal([[3, 'p7'], [4, 'p6'], [5, 'p5'], [6, 'p4'], [7, 'p3']]);
    const top = await store.rank(ws, 'b', 'p9', { period: 'all', previous: false, order: 'desc', around: 2 }, T0);
    expect(top.kept && top.found && top.entries.map((e) => e.userId)).to.deep.equal(['p9', 'p8', 'p7']);
    const asc = await store.rank(ws, 'b', 'p9', { period: 'all', previous: false, order: 'asc', around: 0 }, T0);
    expect(asc).to.deep.include({ found: true, rank: 9, entries: [] });
    expect(await store.rank(ws, 'b', 'nobody', { period: 'all', previous: false, order: 'desc', around: 0 }, T0)).to.deep.include({ found: false });
  });

  it('deletes a player from every period, and answers whether it was there', async () => {
    await store.registry.register(ws, 'b', T0, { field: 'periods', periods: ['all', 'daily'] });
    await set('b', 'p', 3);
    expect(await write('b', 'p', { op: 'delete' })).to.include({ status: 'deleted', deleted: true });
    expect(await write('b', 'p', { op: 'delete' })).to.include({ status: 'deleted', deleted: false });
    expect(await ids('b')).to.deep.equal([]);
    expect(await ids('b', { period: 'daily' })).to.deep.equal([]);
  });

  describe('periods', () => {
    beforeEach(async () => {
      await store.registry.register(ws, 'p', T0, { field: 'periods', periods: ['all', 'daily', 'weekly', 'monthly'] });
    });

    it('one increment counts toward every period the board keeps', async () => {
      const reply = await write('p', 'u', { op: 'increment', amount: 5 });
      expect(reply.status === 'scored' && reply.scores).to.deep.equal([['all', '5'], ['daily', '5'], ['weekly', '5'], ['monthly', '5']]);
      for (const period of ['all', 'daily', 'weekly', 'monthly'] as const) expect(await ids('p', { period })).to.deep.equal(['u']);
    });

    it('starts a day empty at midnight UTC, keeps the day before readable until the next, then it is gone by itself', async () => {
      const lastMs = Date.UTC(2031, 0, 7, 23, 59, 59, 999);
      await write('p', 'u', { op: 'increment', amount: 5 }, lastMs);
      const next = lastMs + 1;
      expect(await ids('p', { period: 'daily' }, next)).to.deep.equal([]);
      expect(await ids('p', { period: 'daily', previous: true }, next)).to.deep.equal(['u']);
      await write('p', 'u', { op: 'increment', amount: 2 }, next);
      expect((await page('p', { period: 'daily' }, next)).entries[0]!.score).to.equal('2');
      expect((await page('p', { period: 'all' }, next)).entries[0]!.score).to.equal('7');
      expect((await page('p', { period: 'daily' }, next)).window).to.include({ id: '2031-01-08', endMs: Date.UTC(2031, 0, 9) });
      // The day's keys expire at the end of the next day: measured against the clock the test set.
      const ttl = await redis.pttl(keys.boardScores(ws, 'p', '2031-01-07'));
      expect(ttl).to.be.within(DAY - 5000, DAY + 1);
    });

    it('weeks start on Monday (ISO weeks) and months on the 1st', async () => {
      const sunday = Date.UTC(2031, 0, 12, 23, 0);
      const monday = Date.UTC(2031, 0, 13, 0, 0);
      await write('p', 'u', { op: 'increment', amount: 1 }, sunday);
      expect((await page('p', { period: 'weekly' }, sunday)).window.id).to.equal('2031-W02');
      expect(await ids('p', { period: 'weekly' }, monday)).to.deep.equal([]);
      expect(await ids('p', { period: 'weekly', previous: true }, monday)).to.deep.equal(['u']);
      expect(await ids('p', { period: 'monthly' }, monday)).to.deep.equal(['u']);
      expect(await ids('p', { period: 'monthly' }, Date.UTC(2031, 1, 1))).to.deep.equal([]);
      expect(await ids('p', { period: 'monthly', previous: true }, Date.UTC(2031, 1, 1))).to.deep.equal(['u']);
    });

    it('a period the board does not keep is refused on reads, and writes go to the periods it keeps now', async () => {
      await store.registry.register(ws, 'q', T0, { field: 'periods', periods: ['weekly'] });
      await set('q', 'u', 3);
      expect(await store.page(ws, 'q', query({ period: 'all' }), T0)).to.deep.equal({ kept: false, periods: ['weekly'] });
      expect(await ids('q', { period: 'weekly' })).to.deep.equal(['u']);
      // An operator adds daily: this instance remembered 'weekly', and learns it from the refusal.
      await store.registry.register(ws, 'q', T0, { field: 'periods', periods: ['daily', 'weekly'] });
      await store.syncMeta(ws, 'q', ['daily', 'weekly'], true);
      await set('q', 'v', 4);
      expect(await ids('q', { period: 'daily' })).to.deep.equal(['v']);
      // Weekly dropped: what it holds is read until it expires with its week; a new week is refused.
      await store.registry.register(ws, 'q', T0, { field: 'periods', periods: ['daily'] });
      await store.syncMeta(ws, 'q', ['daily'], true);
      expect(await ids('q', { period: 'weekly' })).to.deep.equal(['v', 'u']);
      expect(await store.page(ws, 'q', query({ period: 'weekly' }), T0 + 7 * DAY)).to.deep.equal({ kept: false, periods: ['daily'] });
    });
  });

  it('refuses a new player past the most entries of a period, still lets existing ones move', async () => {
    const small = new LeaderboardStore(redis, new BoardRegistry(redis, 5), { maxEntries: 3, idempotencyTtlSeconds: 60 });
    for (const user of ['a', 'b', 'c']) await small.write(ws, 'full', user, { op: 'set', score: 1 }, { nowMs: T0 });
    expect(await small.write(ws, 'full', 'd', { op: 'set', score: 1 }, { nowMs: T0 })).to.deep.include({ status: 'refused', refusal: { code: 'BOARD_FULL', period: 'all' } });
    expect(await small.write(ws, 'full', 'a', { op: 'increment', amount: 1 }, { nowMs: T0 })).to.include({ status: 'scored' });
    expect(await ids('full')).to.deep.equal(['a', 'b', 'c']);
  });

  it('registers a board on its first write, within the most boards of a workspace', async () => {
    for (let i = 0; i < 5; i++) await set(`board${i}`, 'u', 1);
    let refused: unknown;
    try {
      await set('board5', 'u', 1);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.have.property('code', 'TOO_MANY_BOARDS');
    expect((await store.registry.list(ws)).map((b) => b.board)).to.deep.equal(['board0', 'board1', 'board2', 'board3', 'board4']);
    expect(await redis.exists(keys.boardMeta(ws, 'board5'))).to.equal(0);
  });

  it('counts the entries it adds and removes for the storage total, periods that expired included', async () => {
    await store.registry.register(ws, 'c', T0, { field: 'periods', periods: ['all', 'daily'] });
    const first = await set('c', 'a', 1);
    expect(first.status === 'scored' && first.entriesDelta).to.equal(2);
    expect((await set('c', 'a', 2)).status === 'scored' && (await set('c', 'a', 3))).to.include({ entriesDelta: 0 });
    // Two days on, yesterday's key is gone (expired at the end of today in the test's time): -1.
    await redis.del(keys.boardScores(ws, 'c', '2031-01-07'), keys.boardMembers(ws, 'c', '2031-01-07'));
    const later = await set('c', 'a', 4, T0 + 2 * DAY);
    expect(later.status === 'scored' && later.entriesDelta).to.equal(0); // +1 in the new day, -1 for the day gone
    const gone = await write('c', 'a', { op: 'delete' }, T0 + 2 * DAY);
    expect(gone.status === 'deleted' && gone.entriesDelta).to.equal(-2);
  });

  it('follows a player key: the newest version wins, whatever order they arrive in', async () => {
    expect(await store.applyFollowed(ws, 'f', 'u', '100', 3, T0)).to.include({ status: 'scored', changed: true });
    expect(await store.applyFollowed(ws, 'f', 'u', '50', 2, T0)).to.include({ status: 'deleted', deleted: false });
    expect((await page('f')).entries[0]!.score).to.equal('100');
    await store.applyFollowed(ws, 'f', 'u', '"not a number"', 4, T0);
    expect(await ids('f')).to.deep.equal([]);
    await store.applyFollowed(ws, 'f', 'u', '7', 5, T0);
    await store.applyFollowed(ws, 'f', 'u', null, 5, T0); // the same version again: ignored
    expect(await ids('f')).to.deep.equal(['u']);
    await store.applyFollowed(ws, 'f', 'u', null, 6, T0);
    expect(await ids('f')).to.deep.equal([]);
  });

  it('removePlayer takes the player off every board and period of the workspace, and only that workspace', async () => {
    const other = randomId('ws');
    await store.registry.register(ws, 'w', T0, { field: 'periods', periods: ['all', 'weekly'] });
    // on last week's board too
    await set('w', 'gone', 1, T0 - 7 * DAY);
    for (const board of ['v', 'w']) {
      await set(board, 'gone', 9);
      await set(board, 'stays', 8);
    }
    await store.write(other, 'v', 'gone', { op: 'set', score: 9 }, { nowMs: T0 });
    const removed = await store.removePlayer(ws, 'gone', T0);
    expect(removed).to.deep.equal({ boards: 2, entriesDelta: -4 });
    expect(await ids('v')).to.deep.equal(['stays']);
    expect(await ids('w', { period: 'weekly' })).to.deep.equal(['stays']);
    expect(await ids('w', { period: 'weekly', previous: true })).to.deep.equal([]);
    expect((await store.page(other, 'v', query(), T0)).kept && (await store.page(other, 'v', query(), T0))).to.have.nested.property('entries[0].userId', 'gone');
  });
});
