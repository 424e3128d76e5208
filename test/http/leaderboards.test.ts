// The leaderboard endpoints over HTTP against the real service and Redis: writes and reads, ties,
// pages under concurrent writes, periods across a boundary with a clock the test moves, the
// limits (409), the storage quota, idempotency keys, scopes, bad input (400) and isolation
// between workspaces. Every answer is checked against the OpenAPI document (hooks.ts).
import { expect } from 'chai';
import { AdminOperations } from '../../src/admin/operations.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { client, newWorkspace, startTestService, testConfig, testRedis } from '../support/service.js';

const T0 = Date.UTC(2031, 4, 12, 23, 59, 58); // Monday 12 May 2031, 2 s before midnight UTC

describe('leaderboards over HTTP', () => {
  let service: RunningService;
  let redis: ReturnType<typeof testRedis>;
  let now = T0;
  before(async () => {
    const config = testConfig({ LEADERBOARD_MAX_BOARDS: '3', LEADERBOARD_MAX_ENTRIES: '50', STORAGE_FLUSH_MS: '100', STORAGE_REFRESH_MS: '100' });
    service = await startService(config, createLogger(config), { clock: () => now });
    redis = testRedis();
  });
  beforeEach(() => {
    now = T0;
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  async function api(plan: 'free' | 'pro' = 'pro') {
    const ws = await newWorkspace(redis, plan);
    return { ws, api: client(service, ws.apiKey) };
  }

  it('sets, increments and deletes scores, and pages them best first with ranks', async () => {
    const { api: c } = await api();
    expect((await c.post('/leaderboards/coins/set', { userId: 42, score: 1200 })).body).to.deep.equal({
      success: true,
      data: { userId: '42', score: 1200, scores: { all: 1200 } },
    });
    await c.post('/leaderboards/coins/set', { userId: 'ann', score: 900 });
    const inc = await c.post('/leaderboards/coins/increment', { userId: 'ann', amount: 400 });
    expect(inc.body.data).to.deep.equal({ userId: 'ann', score: 1300, scores: { all: 1300 } });
    expect((await c.post('/leaderboards/coins/increment', { userId: 'bob' })).body.data.score).to.equal(1);
    const page = await c.get('/leaderboards/coins');
    expect(page.status).to.equal(200);
    expect(page.body).to.deep.equal({
      success: true,
      data: {
        entries: [
          { rank: 1, userId: 'ann', score: 1300 },
          { rank: 2, userId: '42', score: 1200 },
          { rank: 3, userId: 'bob', score: 1 },
        ],
        next: null,
      },
    });
    expect((await c.get('/leaderboards/coins?order=asc&limit=1')).body.data.entries).to.deep.equal([{ rank: 1, userId: 'bob', score: 1 }]);
    expect((await c.post('/leaderboards/coins/delete', { userId: 'bob' })).body).to.deep.equal({ success: true, data: { deleted: 1 } });
    expect((await c.post('/leaderboards/coins/delete', { userId: 'bob' })).body.data.deleted).to.equal(0);
    expect((await c.get('/leaderboards/nothing-yet')).body.data).to.deep.equal({ entries: [], next: null });
  });

  it("answers a player's rank and score with the entries around; 404 PLAYER_NOT_FOUND when absent", async () => {
    const { api: c } = await api();
    for (let i = 1; i <= 6; i++) await c.post('/leaderboards/lvl/set', { userId: `p${i}`, score: i });
    const res = await c.get('/leaderboards/lvl/players/p3?around=1');
    expect(res.body.data).to.deep.equal({
      userId: 'p3',
      rank: 4,
      score: 3,
      entries: [
        { rank: 3, userId: 'p4', score: 4 },
        { rank: 4, userId: 'p3', score: 3 },
        { rank: 5, userId: 'p2', score: 2 },
      ],
    });
    expect((await c.get('/leaderboards/lvl/players/p3')).body.data).to.deep.equal({ userId: 'p3', rank: 4, score: 3 });
    const missing = await c.get('/leaderboards/lvl/players/nobody');
    expect([missing.status, missing.body.code]).to.deep.equal([404, 'PLAYER_NOT_FOUND']);
  });

  it('ranks ties by who reached the score first, whether set or incremented', async () => {
    const { api: c } = await api();
    for (const user of ['c', 'a', 'b']) await c.post('/leaderboards/t/set', { userId: user, score: 7 });
    await c.post('/leaderboards/t/increment', { userId: 'z', amount: 7 });
    expect((await c.get('/leaderboards/t')).body.data.entries.map((e: { userId: string }) => e.userId)).to.deep.equal(['c', 'a', 'b', 'z']);
  });

  it('pages under concurrent writes: entries that keep their score are each shown once', async () => {
    const { api: c } = await api();
    const steady = Array.from({ length: 30 }, (_, i) => `s${i}`);
    for (const [i, user] of steady.entries()) await c.post('/leaderboards/live/set', { userId: user, score: (i % 10) * 10 });
    const movers = Array.from({ length: 8 }, (_, i) => `m${i}`);
    for (const user of movers) await c.post('/leaderboards/live/set', { userId: user, score: 50 });
    let stop = false;
    const churn = (async () => {
      let n = 0;
      while (!stop) {
        const user = movers[n++ % movers.length]!;
        await c.post('/leaderboards/live/set', { userId: user, score: Math.floor(Math.random() * 100) });
      }
      return n;
    })();
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const res: { status: number; body: any } = await c.get(`/leaderboards/live?limit=3${after ? `&after=${after}` : ''}`);
      expect(res.status).to.equal(200);
      seen.push(...res.body.data.entries.map((e: { userId: string }) => e.userId));
      after = res.body.data.next;
    } while (after !== null);
    stop = true;
    expect(await churn).to.be.greaterThan(3);
    const steadySeen = seen.filter((u) => u.startsWith('s'));
    expect([...steadySeen].sort()).to.deep.equal([...steady].sort());
    expect(new Set(steadySeen).size).to.equal(steadySeen.length);
  });

  it('periods: a write counts toward the periods set for the board; a day starts empty at midnight and yesterday stays readable', async () => {
    const { ws, api: c } = await api();
    await new AdminOperations(redis).leaderboards.setPeriods(ws.workspaceId, 'daily-coins', ['all', 'daily', 'weekly']);
    const first = await c.post('/leaderboards/daily-coins/increment', { userId: 'u', amount: 5 });
    expect(first.body.data).to.deep.equal({ userId: 'u', score: 5, scores: { all: 5, daily: 5, weekly: 5 } });
    const today = await c.get('/leaderboards/daily-coins?period=daily');
    expect(today.body.data.period).to.deep.equal({ name: 'daily', id: '2031-05-12', startsAt: '2031-05-12T00:00:00.000Z', endsAt: '2031-05-13T00:00:00.000Z' });
    now = T0 + 2000; // midnight: Tuesday 13 May
    expect((await c.get('/leaderboards/daily-coins?period=daily')).body.data.entries).to.deep.equal([]);
    expect((await c.get('/leaderboards/daily-coins?period=daily&previous=true')).body.data.entries).to.deep.equal([{ rank: 1, userId: 'u', score: 5 }]);
    const again = await c.post('/leaderboards/daily-coins/increment', { userId: 'u', amount: 1 });
    expect(again.body.data.scores).to.deep.equal({ all: 6, daily: 1, weekly: 6 });
    expect((await c.get('/leaderboards/daily-coins/players/u?period=weekly')).body.data).to.deep.include({ rank: 1, score: 6 });
    const notKept = await c.get('/leaderboards/daily-coins?period=monthly');
    expect([notKept.status, notKept.body.code]).to.deep.equal([404, 'PERIOD_NOT_KEPT']);
    expect((await c.get('/leaderboards/daily-coins?previous=true')).status).to.equal(400);
  });

  it('refuses bad input with 400 naming the field, never 500', async () => {
    const { api: c } = await api();
    const cases: Array<[string, Promise<{ status: number; body: any }>]> = [
      ['bad board', c.post('/leaderboards/bad%20name/set', { userId: 1, score: 1 })],
      ['long board', c.get(`/leaderboards/${'x'.repeat(65)}`)],
      ['no score', c.post('/leaderboards/b/set', { userId: 1 })],
      ['string score', c.post('/leaderboards/b/set', { userId: 1, score: '5' })],
      ['infinite score', c.post('/leaderboards/b/set', undefined, { rawBody: '{"userId":1,"score":1e400}', headers: { 'content-type': 'application/json' } })],
      ['bad user', c.post('/leaderboards/b/increment', { userId: -1 })],
      ['limit 0', c.get('/leaderboards/b?limit=0')],
      ['limit 101', c.get('/leaderboards/b?limit=101')],
      ['bad cursor', c.get('/leaderboards/b?after=notacursor')],
      ['bad period', c.get('/leaderboards/b?period=yearly')],
      ['bad min', c.get('/leaderboards/b?min=abc')],
      ['around 51', c.get('/leaderboards/b/players/1?around=51')],
      ['bad player', c.get('/leaderboards/b/players/a%20b')],
      ['unknown field', c.post('/leaderboards/b/delete', { userId: 1, score: 3 })],
    ];
    for (const [name, pending] of cases) {
      const res = await pending;
      expect([res.status, res.body?.code], name).to.deep.equal([400, 'INVALID_REQUEST']);
      expect(res.body.error, name).to.be.a('string').and.not.be.empty;
    }
    const desc = await c.get('/leaderboards/b?limit=1&order=desc');
    expect(desc.status).to.equal(200);
  });

  it('a cursor from one order is refused in the other', async () => {
    const { api: c } = await api();
    for (let i = 0; i < 3; i++) await c.post('/leaderboards/o/set', { userId: i, score: i });
    const first = await c.get('/leaderboards/o?limit=1');
    const res = await c.get(`/leaderboards/o?limit=1&order=asc&after=${first.body.data.next}`);
    expect([res.status, res.body.code]).to.deep.equal([400, 'INVALID_REQUEST']);
  });

  it('409 TOO_MANY_BOARDS past the most boards, 409 BOARD_FULL past the most entries', async () => {
    const { api: c } = await api();
    for (const board of ['a', 'b', 'c']) expect((await c.post(`/leaderboards/${board}/set`, { userId: 1, score: 1 })).status).to.equal(200);
    const tooMany = await c.post('/leaderboards/d/set', { userId: 1, score: 1 });
    expect([tooMany.status, tooMany.body.code]).to.deep.equal([409, 'TOO_MANY_BOARDS']);
    for (let i = 2; i <= 50; i++) await c.post('/leaderboards/a/set', { userId: i, score: i });
    const full = await c.post('/leaderboards/a/set', { userId: 51, score: 1 });
    expect([full.status, full.body.code]).to.deep.equal([409, 'BOARD_FULL']);
    expect((await c.post('/leaderboards/a/increment', { userId: 50 })).status, 'players on it still move').to.equal(200);
    expect((await c.get('/leaderboards/a?limit=1')).body.data.entries[0]).to.deep.equal({ rank: 1, userId: '50', score: 51 });
  });

  it('Idempotency-Key: a retry replays the first answer and writes nothing; another request with it is 422', async () => {
    const { api: c } = await api();
    const headers = { 'Idempotency-Key': 'inc-1' };
    const first = await c.post('/leaderboards/i/increment', { userId: 'u', amount: 5 }, { headers });
    const again = await c.post('/leaderboards/i/increment', { userId: 'u', amount: 5 }, { headers });
    expect(again.text).to.equal(first.text);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect((await c.get('/leaderboards/i/players/u')).body.data.score).to.equal(5);
    const reused = await c.post('/leaderboards/i/increment', { userId: 'u', amount: 6 }, { headers });
    expect([reused.status, reused.body.code]).to.deep.equal([422, 'IDEMPOTENCY_KEY_REUSED']);
    const onData = await c.post('/data/set', { userId: 'u', key: 'k', value: 1 }, { headers });
    expect(onData.status, 'claimed in the workspace, whatever the route').to.equal(422);
  });

  it('a read-only key reads boards but cannot write them (403)', async () => {
    const { ws, api: c } = await api();
    await c.post('/leaderboards/r/set', { userId: 1, score: 1 });
    const read = await new AdminOperations(redis).createKey(ws.workspaceId, { scope: 'read' });
    const ro = client(service, read.apiKey);
    expect((await ro.get('/leaderboards/r')).status).to.equal(200);
    const refused = await ro.post('/leaderboards/r/set', { userId: 1, score: 2 });
    expect([refused.status, refused.body.code]).to.deep.equal([403, 'FORBIDDEN']);
  });

  it('keeps workspaces apart: the same board name in two workspaces', async () => {
    const one = await api();
    const two = await api();
    await one.api.post('/leaderboards/shared/set', { userId: 'x', score: 10 });
    await two.api.post('/leaderboards/shared/set', { userId: 'y', score: 20 });
    expect((await one.api.get('/leaderboards/shared')).body.data.entries.map((e: { userId: string }) => e.userId)).to.deep.equal(['x']);
    expect((await two.api.get('/leaderboards/shared/players/x')).status).to.equal(404);
  });
});

describe('leaderboards and the storage quota', () => {
  let service: RunningService;
  let redis: ReturnType<typeof testRedis>;
  before(async () => {
    service = await startTestService({ STORAGE_QUOTA_FREE_BYTES: '2000', STORAGE_FLUSH_MS: '50', STORAGE_REFRESH_MS: '50' });
    redis = testRedis();
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  it('counts entries into the storage total, refuses adding past the quota (403), always lets deletes through', async () => {
    const ws = await newWorkspace(redis, 'free');
    const c = client(service, ws.apiKey);
    let refused: { status: number; body: any } | undefined;
    let written = 0;
    for (let i = 0; i < 100 && !refused; i++) {
      const res = await c.post('/leaderboards/q/set', { userId: i, score: i });
      if (res.status === 200) written++;
      else refused = res;
    }
    expect([refused?.status, refused?.body.code]).to.deep.equal([403, 'STORAGE_QUOTA_EXCEEDED']);
    expect(written).to.be.within(10, 20);
    expect((await c.post('/leaderboards/q/delete', { userId: 0 })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 150));
    const details = await new AdminOperations(redis).showWorkspace(ws.workspaceId);
    expect(details.storage.bytes).to.be.greaterThan(1500).and.below(3200);
  });
});
