// A workspace's leaderboards for operators: the operations (list, page, a player's rank, remove an entry, reset,
// delete, periods, follow), the admin HTTP API and the CLI over them, the audit trail and the
// storage total; a workspace's deletion removes its boards, and its export and import carry
// them (ties kept in order, every mode).
import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { AdminOperations } from '../../src/admin/operations.js';
import { BOARD_ENTRY_BYTES } from '../../src/store/boards/board-memory.js';
import { keys } from '../../src/store/keys.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { adminCall, ADMIN_TOKEN, testOps } from '../support/admin.js';
import { cli, oneJsonLine } from '../support/cli.js';
import { client, newWorkspace, useService } from '../support/service.js';

async function exportText(ops: AdminOperations, id: string): Promise<string> {
  const exported = await ops.exportWorkspace(id);
  let text = '';
  for await (const line of exported.lines) text += line;
  return text;
}

describe('leaderboards for operators', () => {
  const t = useService({ ADMIN_TOKEN });
  let ops: AdminOperations;
  before(() => {
    ops = testOps(t.redis);
  });

  /**
   * A workspace with a board, written through the store: the service's own storage counts (added
   * to Redis every STORAGE_FLUSH_MS) then never move a total a test reads.
   */
  async function withBoard(scores: Array<[string, number]>, board = 'coins') {
    const ws = await newWorkspace(t.redis);
    for (const [userId, score] of scores) {
      expect(await ops.boards.write(ws.workspaceId, board, userId, { op: 'set', score }, { nowMs: Date.now() })).to.include({ status: 'scored' });
    }
    return { id: ws.workspaceId, api: client(t.service, ws.apiKey) };
  }

  it('lists boards with periods, follow and entries; pages one; removes an entry; resets; deletes; each audited', async () => {
    const { id, api } = await withBoard([['a', 3], ['b', 2], ['c', 1]]);
    await ops.leaderboards.setPeriods(id, 'coins', 'all,weekly');
    await ops.leaderboards.follow(id, 'coins', 'coins');
    await ops.boards.write(id, 'coins', 'd', { op: 'increment', amount: 5 }, { nowMs: Date.now() });
    const [listed] = await ops.leaderboards.list(id);
    expect(listed).to.deep.include({ board: 'coins', periods: ['all', 'weekly'], follow: { key: 'coins' } });
    expect(listed!.entries.map((e) => [e.period, e.entries])).to.deep.equal([['all', 4], ['weekly', 1]]);

    const first = await ops.leaderboards.page(id, 'coins', { limit: 2 });
    expect(first.entries).to.deep.equal([{ rank: 1, userId: 'd', score: 5 }, { rank: 2, userId: 'a', score: 3 }]);
    const second = await ops.leaderboards.page(id, 'coins', { limit: 2, after: first.next! });
    expect(second.entries.map((e) => e.userId)).to.deep.equal(['b', 'c']);
    expect(second.next).to.equal(null);

    const totals = async () => (await readStorageTotals(t.redis, id)).bytes;
    const before = await totals();
    expect(await ops.leaderboards.removeEntry(id, 'coins', 'd')).to.deep.equal({ board: 'coins', userId: 'd', deleted: 1 });
    expect(before - (await totals())).to.equal(2 * BOARD_ENTRY_BYTES); // all-time and this week
    expect((await api.get('/leaderboards/coins/players/d')).status).to.equal(404);

    expect(await ops.leaderboards.reset(id, 'coins')).to.deep.equal({ board: 'coins', removed: 3 });
    expect((await api.get('/leaderboards/coins')).body.data.entries).to.deep.equal([]);
    expect((await ops.leaderboards.list(id))[0]).to.deep.include({ periods: ['all', 'weekly'], follow: { key: 'coins' } });

    await ops.boards.write(id, 'coins', 'e', { op: 'set', score: 1 }, { nowMs: Date.now() });
    expect(await ops.leaderboards.delete(id, 'coins')).to.deep.equal({ board: 'coins', removed: 2 });
    expect(await ops.leaderboards.list(id)).to.deep.equal([]);
    expect(await t.redis.exists(keys.boardMeta(id, 'coins'))).to.equal(0);

    const actions = (await ops.readAudit({ workspaceId: id, limit: 20 })).map((e) => e.action);
    expect(actions).to.include.members(['board.set-periods', 'board.follow', 'board.remove-entry', 'board.reset', 'board.delete']);
  });

  it("finds a player's rank in either order, with the entries around; a player not on the board is PLAYER_NOT_FOUND", async () => {
    const { id } = await withBoard([['a', 5], ['b', 4], ['c', 3], ['d', 2], ['e', 1]]);
    expect(await ops.leaderboards.rank(id, 'coins', 'c')).to.deep.equal({ board: 'coins', period: 'all', periodId: 'all', userId: 'c', rank: 3, score: 3, entries: [] });
    const around = await ops.leaderboards.rank(id, 'coins', 'b', { around: 1 });
    expect(around.entries).to.deep.equal([{ rank: 1, userId: 'a', score: 5 }, { rank: 2, userId: 'b', score: 4 }, { rank: 3, userId: 'c', score: 3 }]);
    expect((await ops.leaderboards.rank(id, 'coins', 'b', { order: 'asc' })).rank).to.equal(4);
    const codes = async (p: Promise<unknown>) => p.then(() => 'ok', (err: { code: string }) => err.code);
    expect(await codes(ops.leaderboards.rank(id, 'coins', 'zed'))).to.equal('PLAYER_NOT_FOUND');
    expect(await codes(ops.leaderboards.rank(id, 'coins', 'a', { period: 'weekly' }))).to.equal('PERIOD_NOT_KEPT');
    expect(await codes(ops.leaderboards.rank(id, 'coins', 'a', { around: 51 }))).to.equal('INVALID_REQUEST');
    expect(await codes(ops.leaderboards.rank(id, 'nope', 'a'))).to.equal('NOT_FOUND');
  });

  it('refuses unknown boards (404), bad names and periods (400)', async () => {
    const { id } = await withBoard([['a', 1]]);
    const codes = async (p: Promise<unknown>) => p.then(() => 'ok', (err: { code: string }) => err.code);
    expect(await codes(ops.leaderboards.page(id, 'nope'))).to.equal('NOT_FOUND');
    expect(await codes(ops.leaderboards.reset(id, 'bad name'))).to.equal('INVALID_REQUEST');
    expect(await codes(ops.leaderboards.setPeriods(id, 'coins', 'all,yearly'))).to.equal('INVALID_REQUEST');
    expect(await codes(ops.leaderboards.page(id, 'coins', { period: 'daily' }))).to.equal('PERIOD_NOT_KEPT');
    expect(await codes(ops.leaderboards.list('ws_missing'))).to.equal('NOT_FOUND');
  });

  it('the admin HTTP API: every route, answered as the OpenAPI document says', async () => {
    const { id } = await withBoard([['a', 3], ['b', 2]]);
    const list = await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards`);
    expect(list.status).to.equal(200);
    expect(list.body.data[0]).to.deep.include({ board: 'coins', periods: ['all'] });
    const patched = await adminCall(t.service, 'PATCH', `/workspaces/${id}/leaderboards/coins`, { body: { periods: ['daily', 'all'], follow: 'coins' } });
    expect(patched.body.data).to.deep.include({ board: 'coins', periods: ['all', 'daily'], follow: { key: 'coins' } });
    const unfollowed = await adminCall(t.service, 'PATCH', `/workspaces/${id}/leaderboards/coins`, { body: { follow: null } });
    expect(unfollowed.body.data).to.not.have.property('follow');
    expect((await adminCall(t.service, 'PATCH', `/workspaces/${id}/leaderboards/coins`, { body: {} })).status).to.equal(400);
    const page = await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/coins?limit=1`);
    expect(page.body.data).to.deep.include({ board: 'coins', period: 'all', entries: [{ rank: 1, userId: 'a', score: 3 }] });
    expect((await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/coins?period=weekly`)).body.code).to.equal('PERIOD_NOT_KEPT');
    expect((await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/other`)).status).to.equal(404);
    const rank = await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/coins/entries/b?around=1`);
    expect(rank.body.data).to.deep.equal({
      board: 'coins', period: 'all', periodId: 'all', userId: 'b', rank: 2, score: 2,
      entries: [{ rank: 1, userId: 'a', score: 3 }, { rank: 2, userId: 'b', score: 2 }],
    });
    const missing = await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/coins/entries/nobody`);
    expect([missing.status, missing.body.code]).to.deep.equal([404, 'PLAYER_NOT_FOUND']);
    expect((await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards/coins/entries/a?around=x`)).status).to.equal(400);
    const removed = await adminCall(t.service, 'DELETE', `/workspaces/${id}/leaderboards/coins/entries/a`);
    expect(removed.body.data).to.deep.equal({ board: 'coins', userId: 'a', deleted: 1 });
    expect((await adminCall(t.service, 'DELETE', `/workspaces/${id}/leaderboards/coins/entries/a%20b`)).status).to.equal(400);
    expect((await adminCall(t.service, 'POST', `/workspaces/${id}/leaderboards/coins/reset`)).body.data).to.deep.equal({ board: 'coins', removed: 1 });
    expect((await adminCall(t.service, 'DELETE', `/workspaces/${id}/leaderboards/coins`)).body.data).to.deep.equal({ board: 'coins', removed: 0 });
    expect((await adminCall(t.service, 'DELETE', `/workspaces/${id}/leaderboards/coins`)).status).to.equal(404);
    expect((await adminCall(t.service, 'GET', `/workspaces/${id}/leaderboards`, { token: null })).status).to.equal(401);
  });

  it('the CLI: list, show, rank, set-periods, follow, remove, reset', async () => {
    const { id } = await withBoard([['a', 3], ['b', 2]]);
    expect(oneJsonLine(await cli(['board', 'set-periods', id, 'coins', 'all,monthly', '--json']))).to.deep.include({ periods: ['all', 'monthly'] });
    expect(oneJsonLine(await cli(['board', 'follow', id, 'coins', '--key', 'coins', '--json']))).to.deep.include({ follow: { key: 'coins' } });
    const listed = await cli(['board', 'list', id]);
    expect(listed.stdout).to.match(/^BOARD\s+PERIODS\s+FOLLOWS\s+ENTRIES\ncoins\s+all,monthly\s+coins\s+all 2, monthly 0\n$/);
    const shown = await cli(['board', 'show', id, 'coins', '--limit', '1']);
    expect(shown.stdout).to.match(/^coins \(all-time\)\nRANK\s+USER\s+SCORE\n1\s+a\s+3\nmore: --after \S+\n$/);
    expect((await cli(['board', 'rank', id, 'coins', 'b', '--around', '1'])).stdout).to.match(
      /^b on coins \(all-time\): rank 2, score 2\nRANK\s+USER\s+SCORE\n1\s+a\s+3\n2\s+b\s+2\n$/,
    );
    expect(oneJsonLine(await cli(['board', 'rank', id, 'coins', 'a', '--asc', '--json']))).to.deep.include({ rank: 2, score: 3 });
    const refused = await cli(['board', 'remove', id, 'coins', 'a']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/--yes/);
    expect((await cli(['board', 'remove', id, 'coins', 'a', '--yes'])).stdout).to.equal('removed player a from coins\n');
    expect((await cli(['board', 'reset', id, 'coins', '--yes'])).stdout).to.equal('reset coins: 1 entries removed\n');
    expect((await cli(['board', 'follow', id, 'coins'])).code).to.equal(2);
  });

  it("a workspace's deletion removes its boards: every period, meta and registry", async () => {
    const { id, api } = await withBoard([['a', 1]], 'gone');
    await ops.leaderboards.setPeriods(id, 'gone', 'all,daily');
    expect((await api.post('/leaderboards/gone/set', { userId: 'b', score: 2 })).status).to.equal(200);
    expect(await t.redis.keys(`pds:lb:{${id}:*`)).to.not.be.empty;
    await ops.deleteWorkspace(id);
    expect(await t.redis.keys(`pds:lb:{${id}:*`)).to.deep.equal([]);
    expect(await t.redis.exists(keys.boardRegistry(id))).to.equal(0);
  });

  describe('export and import carry boards', () => {
    it('exports each board as a config line and its entries best first; an import gives them back, ties in order', async () => {
      const { id } = await withBoard([['x', 5], ['y', 5], ['z', 9], ['w', 5]]);
      await ops.leaderboards.setPeriods(id, 'coins', 'all,weekly');
      await ops.boards.write(id, 'coins', 'y', { op: 'increment', amount: 0.5 }, { nowMs: Date.now() });
      await ops.leaderboards.follow(id, 'coins', 'coins');
      const text = await exportText(ops, id);
      const boardLines = text.trimEnd().split('\n').filter((l) => l.startsWith('{"board"')).map((l) => JSON.parse(l));
      expect(boardLines[0]).to.deep.equal({ board: 'coins', config: { periods: ['all', 'weekly'], follow: { key: 'coins' } } });
      expect(boardLines[1]).to.deep.equal({ board: 'coins', period: 'all', id: 'all', entries: [['z', 9], ['y', 5.5], ['x', 5], ['w', 5]] });
      expect(boardLines[2]).to.deep.include({ board: 'coins', period: 'weekly', entries: [['y', 0.5]] });

      const target = (await newWorkspace(t.redis)).workspaceId;
      const summary = await ops.importWorkspace(target, { stream: Readable.from([Buffer.from(text)]) });
      expect(summary.boards).to.deep.equal({ imported: 1, replaced: 0, skipped: 0, entries: 5, erased: 0 });
      expect(summary.failed).to.equal(0);
      const page = await ops.leaderboards.page(target, 'coins');
      expect(page.entries.map((e) => [e.userId, e.score])).to.deep.equal([['z', 9], ['y', 5.5], ['x', 5], ['w', 5]]);
      expect((await ops.leaderboards.page(target, 'coins', { period: 'weekly' })).entries.map((e) => e.userId)).to.deep.equal(['y']);
      expect((await ops.leaderboards.list(target))[0]).to.deep.include({ follow: { key: 'coins' } });
      expect((await readStorageTotals(t.redis, target)).bytes).to.equal(5 * BOARD_ENTRY_BYTES);
      // and the service writes on after them, ties behind the imported ones
      const writer = client(t.service, (await ops.createKey(target)).apiKey);
      await writer.post('/leaderboards/coins/set', { userId: 'v', score: 5 });
      expect((await ops.leaderboards.page(target, 'coins')).entries.map((e) => e.userId)).to.deep.equal(['z', 'y', 'x', 'w', 'v']);
    });

    it('skip keeps an existing board, overwrite replaces it, fail writes nothing', async () => {
      const { id } = await withBoard([['a', 1], ['b', 2]]);
      const text = await exportText(ops, id);
      const { id: target } = await withBoard([['c', 7]]);
      const skipped = await ops.importWorkspace(target, { stream: Readable.from([Buffer.from(text)]) }, { mode: 'skip' });
      expect(skipped.boards).to.deep.equal({ imported: 0, replaced: 0, skipped: 1, entries: 0, erased: 0 });
      expect((await ops.leaderboards.page(target, 'coins')).entries.map((e) => e.userId)).to.deep.equal(['c']);
      const failed = await ops.importWorkspace(target, { stream: Readable.from([Buffer.from(text)]) }, { mode: 'fail' });
      expect(failed.complete).to.equal(false);
      expect(failed.errors.map((e) => e.code)).to.deep.equal(['CONFLICT']);
      const replaced = await ops.importWorkspace(target, { stream: Readable.from([Buffer.from(text)]) }, { mode: 'overwrite' });
      expect(replaced.boards).to.deep.equal({ imported: 0, replaced: 1, skipped: 0, entries: 2, erased: 0 });
      expect((await ops.leaderboards.page(target, 'coins')).entries.map((e) => e.userId)).to.deep.equal(['b', 'a']);
    });

    it('reports bad board lines by number and writes nothing of them', async () => {
      const target = (await newWorkspace(t.redis)).workspaceId;
      const lines = [
        '{"board":"ok","config":{"periods":["all"]}}',
        '{"board":"ok","period":"all","id":"all","entries":[["a",1],["b","x"]]}',
        '{"board":"bad name","config":{"periods":["all"]}}',
        '{"board":"ok","period":"daily","id":"2031-02-30","entries":[]}',
        '{"board":"later","period":"all","id":"all","entries":[["a",1]]}',
        '{"board":"ok","period":"all","id":"all","entries":[["c",3]]}',
      ];
      const summary = await ops.importWorkspace(target, { stream: Readable.from([Buffer.from(lines.join('\n'))]) });
      expect(summary.errors.map((e) => e.line)).to.deep.equal([2, 3, 4, 5]);
      expect(summary.boards).to.deep.equal({ imported: 1, replaced: 0, skipped: 0, entries: 1, erased: 0 });
      expect((await ops.leaderboards.page(target, 'ok')).entries.map((e) => e.userId)).to.deep.equal(['c']);
    });
  });
});
