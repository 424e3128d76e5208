// The TypeScript client's leaderboard calls (clients/typescript/src/leaderboard.ts, imported
// from source) against the real service: set, increment, delete, top, pages, rank, around,
// periods, retries with one Idempotency-Key, and argument checks before any request.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as PlayerData from '../../clients/typescript/src/index.js';
import { PlayerDataClient, PlayerDataError } from '../../clients/typescript/src/index.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { testOps } from '../support/admin.js';
import { newWorkspace, useService } from '../support/service.js';

describe('TypeScript client: leaderboards (against the service)', () => {
  const t = useService();
  let ws: CreatedWorkspace;
  let client: PlayerDataClient;
  beforeEach(async () => {
    ws = await newWorkspace(t.redis, 'pro', 'TS Boards');
    client = new PlayerDataClient({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
  });

  it('sets and increments scores, reads the top, ranks and the players around', async () => {
    const board = client.leaderboard('coins');
    expect(await board.set(42, 1200)).to.deep.equal({ userId: '42', score: 1200, scores: { all: 1200 } });
    await board.set('ann', 1200);
    expect((await board.increment(7, 250)).score).to.equal(250);
    expect((await board.increment(7)).score).to.equal(251);
    expect(await board.top(2)).to.deep.equal([
      { rank: 1, userId: '42', score: 1200 },
      { rank: 2, userId: 'ann', score: 1200 },
    ]);
    expect(await board.top(3, { order: 'asc' })).to.have.nested.property('[0].userId', '7');
    expect(await board.rank('ann')).to.deep.equal({ userId: 'ann', rank: 2, score: 1200 });
    expect(await board.rank('nobody')).to.equal(undefined);
    expect((await board.around(7, 1)).map((e) => e.userId)).to.deep.equal(['ann', '7']);
    expect(await board.around(7, 0)).to.deep.equal([{ rank: 3, userId: '7', score: 251 }]);
    expect(await board.around('nobody', 2)).to.deep.equal([]);
    expect(await board.delete(7)).to.equal(true);
    expect(await board.delete(7)).to.equal(false);
  });

  it('pages every entry once with the cursor, and pages() walks them all', async () => {
    const board = client.leaderboard('levels');
    for (let i = 0; i < 23; i++) await board.set(`p${i}`, i % 5);
    const first = await board.page({ limit: 10 });
    expect(first.entries).to.have.length(10);
    const second = await board.page({ limit: 10, after: first.next });
    expect(second.entries[0]!.rank).to.equal(11);
    const seen: string[] = [];
    for await (const page of board.pages({ limit: 7 })) seen.push(...page.entries.map((e) => e.userId));
    expect(seen).to.have.length(23);
    expect(new Set(seen).size).to.equal(23);
    expect((await board.page({ min: 4 })).entries.map((e) => e.score)).to.deep.equal([4, 4, 4, 4]);
  });

  it('reads the period it was made for, and answers PERIOD_NOT_KEPT for one the board does not keep', async () => {
    await testOps(t.redis).leaderboards.setPeriods(ws.workspaceId, 'wins', 'all,weekly');
    const result = await client.leaderboard('wins').increment('u', 3);
    expect(result.scores).to.deep.equal({ all: 3, weekly: 3 });
    const weekly = await client.leaderboard('wins', { period: 'weekly' }).page();
    expect(weekly.entries).to.deep.equal([{ rank: 1, userId: 'u', score: 3 }]);
    expect(weekly.period?.name).to.equal('weekly');
    expect(await client.leaderboard('wins', { period: 'weekly', previous: true }).top()).to.deep.equal([]);
    const refused = await client.leaderboard('wins', { period: 'daily' }).top().catch((err: unknown) => err);
    expect(refused).to.be.instanceOf(PlayerDataError);
    expect(refused).to.include({ operation: 'leaderboard.top', status: 404, code: 'PERIOD_NOT_KEPT' });
  });

  it('a retried write sends the same Idempotency-Key and counts once', async () => {
    const board = client.leaderboard('once');
    const key = 'receipt-1';
    await board.increment('u', 5, { idempotencyKey: key });
    await board.increment('u', 5, { idempotencyKey: key });
    expect((await board.rank('u'))?.score).to.equal(5);
  });

  it('refuses bad arguments before any request, and works through the module-level API', async () => {
    expect(() => client.leaderboard('bad name')).to.throw(TypeError, /PlayerData\.leaderboard: the name/);
    const board = client.leaderboard('b');
    for (const attempt of [() => board.set(1, Number.NaN), () => board.top(101), () => board.around(1, 51), () => board.increment(1, Infinity)]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TypeError);
    }
    await PlayerData.init({ baseUrl: t.service.baseUrl, apiKey: ws.apiKey });
    await PlayerData.leaderboard('module').set(1, 2);
    expect(await PlayerData.leaderboard('module').top()).to.deep.equal([{ rank: 1, userId: '1', score: 2 }]);
  });

  it("the README's leaderboard example runs as written", async () => {
    const readme = readFileSync(new URL('../../clients/typescript/README.md', import.meta.url), 'utf8');
    const code = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!).find((c) => c.includes('export async function recordWin('));
    expect(code, 'the README example defining recordWin').to.be.a('string');
    await testOps(t.redis).leaderboards.setPeriods(ws.workspaceId, 'wins', 'all,weekly,daily');
    const dir = mkdtempSync(join(tmpdir(), 'pds-ts-board-'));
    const clientUrl = pathToFileURL(new URL('../../clients/typescript/src/index.ts', import.meta.url).pathname).href;
    const file = join(dir, 'record-win.mts');
    writeFileSync(file, code!.split('@player-data-service/client').join(clientUrl));
    Object.assign(process.env, { PDS_URL: t.service.baseUrl, PDS_API_KEY: ws.apiKey });
    try {
      const { recordWin } = await import(pathToFileURL(file).href);
      await recordWin(5);
      const { top, me } = await recordWin(6).then(() => recordWin(6));
      expect(top).to.deep.equal([
        { rank: 1, userId: '6', score: 2 },
        { rank: 2, userId: '5', score: 1 },
      ]);
      expect(me).to.deep.equal({ userId: '6', rank: 1, score: 2 });
    } finally {
      delete process.env['PDS_URL'];
      delete process.env['PDS_API_KEY'];
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
