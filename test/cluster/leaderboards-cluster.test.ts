// Leaderboards on a Redis Cluster (3 masters + 3 replicas): boards spread over the masters, each
// script in one slot (no node ever answers CROSSSLOT), and everything that reaches across the
// workspace's boards (the registry, erasure, export and import, deletion) works across nodes.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { Cluster } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import { decodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { countMatching } from '../../src/store/redis/scan.js';
import { defineScripts } from '../../src/store/redis/scripts.js';
import { crossSlotErrors, startCluster, type TestCluster } from '../support/cluster.js';
import { client } from '../support/service.js';

const T0 = Date.UTC(2031, 6, 31, 23, 59, 59); // the last second of July 2031 (a Thursday)

describe('leaderboards on a Redis Cluster (3 masters + 3 replicas)', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let service: RunningService;
  let redis: Cluster;
  let ops: AdminOperations;
  let now = T0;

  before(async () => {
    cluster = await startCluster();
    const config = loadConfig({
      REDIS_CLUSTER_NODES: cluster.seeds,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'silent',
      LEADERBOARD_MAX_BOARDS: '12',
      LEADERBOARD_MAX_ENTRIES: '40',
      // The service's clock stands still, so the plan's window never ends: the churn below
      // sends as many writes as the machine allows, which a fast one took past 300.
      RATE_LIMIT_PRO: '1000000',
    });
    service = await startService(config, createLogger(config), { clock: () => now });
    redis = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    redis.on('error', () => {});
    defineScripts(redis);
    ops = new AdminOperations(redis, { actor: 'test', clock: () => now });
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
    await cluster?.stop();
  });

  it('serves every leaderboard call over boards on every master, with ties, pages and periods, and no CROSSSLOT', async () => {
    const ws = await ops.createWorkspace({ name: 'boards', plan: 'pro' });
    const api = client(service, ws.apiKey);
    const boards = Array.from({ length: 12 }, (_, i) => `board-${i}`);
    const homes = new Set(await Promise.all(boards.map((b) => cluster.masterOf(keys.boardMeta(ws.workspaceId, b)))));
    expect(homes.size, 'the boards spread over the masters').to.equal(3);
    await ops.leaderboards.setPeriods(ws.workspaceId, 'board-0', 'all,daily,monthly');

    for (const board of boards) {
      for (const [user, score] of [['a', 3], ['b', 3], ['c', 9]] as const) {
        expect((await api.post(`/leaderboards/${board}/set`, { userId: user, score }, { headers: { 'Idempotency-Key': `${board}-${user}` } })).status).to.equal(200);
      }
      const page = await api.get(`/leaderboards/${board}?limit=2`);
      expect(page.body.data.entries.map((e: { userId: string }) => e.userId)).to.deep.equal(['c', 'a']);
      const rest = await api.get(`/leaderboards/${board}?limit=2&after=${page.body.data.next}`);
      expect(rest.body.data.entries).to.deep.equal([{ rank: 3, userId: 'b', score: 3 }]);
      expect((await api.get(`/leaderboards/${board}/players/b?around=1`)).body.data.rank).to.equal(3);
    }
    expect((await api.post('/leaderboards/board-0/increment', { userId: 'a', amount: 10 })).body.data.scores).to.deep.equal({ all: 13, daily: 13, monthly: 13 });
    now = T0 + 1000; // August 1st: a new day and a new month
    expect((await api.get('/leaderboards/board-0?period=monthly')).body.data.entries).to.deep.equal([]);
    expect((await api.get('/leaderboards/board-0?period=monthly&previous=true')).body.data.entries[0]).to.deep.equal({ rank: 1, userId: 'a', score: 13 });
    expect((await ops.leaderboards.list(ws.workspaceId)).map((b) => b.board)).to.have.length(12);
    expect(await crossSlotErrors(cluster)).to.equal(0);
    now = T0;
  });

  it('pages under concurrent writes, keeps workspaces apart, and holds the limits (409)', async () => {
    const one = client(service, (await ops.createWorkspace({ name: 'one', plan: 'pro' })).apiKey);
    const two = client(service, (await ops.createWorkspace({ name: 'two', plan: 'pro' })).apiKey);
    const steady = Array.from({ length: 24 }, (_, i) => `s${i}`);
    for (const [i, user] of steady.entries()) await one.post('/leaderboards/live/set', { userId: user, score: (i % 6) * 10 });
    for (let i = 0; i < 6; i++) await one.post('/leaderboards/live/set', { userId: `m${i}`, score: 25 });
    await two.post('/leaderboards/live/set', { userId: 'other', score: 1000 });
    let stop = false;
    const churn = (async () => {
      let n = 0;
      while (!stop) await one.post('/leaderboards/live/set', { userId: `m${n++ % 6}`, score: Math.floor(Math.random() * 60) });
      return n;
    })();
    const seen: string[] = [];
    let after: string | null = null;
    do {
      // No 503 either: the cluster client is not auto-pipelined any more, whose batches a slot
      // table refreshed meanwhile failed unsent (test/cluster/redis-client.test.ts).
      const res = await one.get(`/leaderboards/live?limit=4${after ? `&after=${after}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      seen.push(...res.body.data.entries.map((e: { userId: string }) => e.userId));
      after = res.body.data.next;
    } while (after !== null);
    stop = true;
    expect(await churn).to.be.greaterThan(2);
    const steadySeen = seen.filter((u) => u.startsWith('s'));
    expect([...steadySeen].sort()).to.deep.equal([...steady].sort());
    expect(new Set(steadySeen).size).to.equal(steadySeen.length);
    expect(seen, 'the other workspace stays apart').to.not.include('other');

    for (let i = 30; i < 40; i++) await one.post('/leaderboards/live/set', { userId: `f${i}`, score: 1 });
    const full = await one.post('/leaderboards/live/set', { userId: 'one-too-many', score: 1 });
    expect([full.status, full.body.code]).to.deep.equal([409, 'BOARD_FULL']);
    for (let i = 1; i < 12; i++) expect((await two.post(`/leaderboards/b${i}/set`, { userId: 1, score: 1 })).status).to.equal(200);
    const tooMany = await two.post('/leaderboards/b12/set', { userId: 1, score: 1 });
    expect([tooMany.status, tooMany.body.code]).to.deep.equal([409, 'TOO_MANY_BOARDS']);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it('erases a player from every board, exports and imports boards, and deletes them with the workspace', async () => {
    const source = await ops.createWorkspace({ name: 'source', plan: 'pro' });
    const id = source.workspaceId;
    const boards = Array.from({ length: 6 }, (_, i) => `b${i}`);
    for (const board of boards) {
      for (const user of ['keep', 'erase']) await ops.boards.write(id, board, user, { op: 'set', score: user.length }, { nowMs: now });
    }
    expect(await ops.boards.removePlayer(id, 'erase', now)).to.deep.equal({ boards: 6, entriesDelta: -6 });

    const exported = await ops.exportWorkspace(id);
    let text = '';
    for await (const line of exported.lines) text += line;
    expect(exported.stats).to.include({ boards: 6, boardEntries: 6 });
    const target = await ops.createWorkspace({ name: 'target', plan: 'pro' });
    const summary = await ops.importWorkspace(target.workspaceId, { stream: Readable.from([Buffer.from(text)]) });
    expect(summary.boards).to.deep.equal({ imported: 6, replaced: 0, skipped: 0, entries: 6, erased: 0 });
    for (const board of boards) {
      expect((await ops.leaderboards.page(target.workspaceId, board)).entries).to.deep.equal([{ rank: 1, userId: 'keep', score: 4 }]);
    }

    expect(await countMatching(redis, keys.boardPattern(id))).to.be.greaterThan(6);
    await ops.deleteWorkspace(id);
    expect(await countMatching(redis, keys.boardPattern(id))).to.equal(0);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it('puts followed keys on their boards across slots, from every endpoint, and mends a crashed write by the sweep', async () => {
    const { workspaceId, apiKey } = await ops.createWorkspace({ name: 'follow on a cluster', plan: 'pro' });
    const api = client(service, apiKey);
    const users = Array.from({ length: 24 }, (_, i) => `f${i}`);
    await ops.leaderboards.follow(workspaceId, 'gold', 'gold');
    // Players on every master, the board on one of them: each write reaches across slots.
    await api.post('/data/batch', { players: users.map((userId, i) => ({ userId, ops: [{ op: 'set', key: 'gold', value: i }] })) });
    await api.post('/data/increment', { userId: 'f3', key: 'gold', amount: 100 });
    // On the board when answered; a board write that timed out on a loaded machine is the sweep's.
    let page = await api.get('/leaderboards/gold?limit=100');
    for (let i = 0; i < 100 && page.body.data.entries.length < 24; i++) {
      await new Promise((r) => setTimeout(r, 30));
      page = await api.get('/leaderboards/gold?limit=100');
    }
    expect(page.body.data.entries).to.have.length(24);
    expect(page.body.data.entries[0]).to.include({ userId: 'f3', score: 103 });
    // A crashed writer: intent and player write, no board; the service's sweep mends it.
    const intent = await ops.follow.intent(workspaceId, 'f0', ['gold'], now);
    await ops.players.write(workspaceId, 'f0', { ops: [{ op: 'set', key: 'gold', valueJson: '500' }] }, { nowMs: now, kind: 'set', actor: 'key:k' });
    expect(intent).to.exist;
    let score: unknown;
    for (let i = 0; i < 100 && score !== 500; i++) {
      score = (await api.get('/leaderboards/gold/players/f0')).body.data?.score;
      if (score !== 500) await new Promise((r) => setTimeout(r, 30));
    }
    expect(score).to.equal(500);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });

  it("answers the workspace's other writes on a master while a followed write there waits on its board's master", async () => {
    const { workspaceId, apiKey } = await ops.createWorkspace({ name: 'follow turns', plan: 'pro' });
    const api = client(service, apiKey);
    // A master with neither the workspace's keys nor its API key's record: the board's.
    const own = new Set([await cluster.masterOf(keys.workspace(workspaceId)), await cluster.masterOf(keys.apiKey(hashApiKey(apiKey)))]);
    const boardMaster = (await cluster.masters()).find((port) => !own.has(port))!;
    let board = 'lvl';
    for (let i = 0; (await cluster.masterOf(keys.boardFollowed(workspaceId, board))) !== boardMaster; i++) board = `lvl-${i}`;
    await ops.leaderboards.follow(workspaceId, board, 'level');
    // Two players on one other master.
    const players: string[] = [];
    let playersMaster: number | undefined;
    for (let i = 0; players.length < 2; i++) {
      const master = await cluster.masterOf(keys.player(workspaceId, `t${i}`));
      if (master === boardMaster || (playersMaster !== undefined && master !== playersMaster)) continue;
      playersMaster = master;
      players.push(`t${i}`);
    }
    const [a, b] = players as [string, string];
    expect((await api.post('/data/set', { userId: a, key: 'level', value: 1 })).status).to.equal(200);
    expect((await api.post('/data/set', { userId: b, key: 'coins', value: 1 })).status).to.equal(200);

    const stopped = cluster.nodes.find((n) => n.port === boardMaster)!.redis.process;
    stopped.kill('SIGSTOP');
    try {
      let aAnswered = false;
      const aWrite = api.post('/data/set', { userId: a, key: 'level', value: 2 }).then((res) => ((aAnswered = true), res));
      // A's script has run (its player holds the value): it now waits on its board.
      for (let i = 0; decodeEntry((await redis.hget(keys.player(workspaceId, a), 'level')) ?? '')?.valueJson !== '2'; i++) {
        expect(i, "a's write reached its player").to.be.below(200);
        await new Promise((r) => setTimeout(r, 10));
      }
      // B, of the same workspace on the same master, is not kept waiting behind A's board: the
      // workspace's turn on a node covers the player's script only.
      const bWrite = await api.post('/data/set', { userId: b, key: 'coins', value: 2 });
      expect(bWrite.status, bWrite.text).to.equal(200);
      expect(aAnswered, "a's answer waits for its board").to.equal(false);
      stopped.kill('SIGCONT');
      expect((await aWrite).status).to.equal(200);
    } finally {
      stopped.kill('SIGCONT');
    }
  });
});
