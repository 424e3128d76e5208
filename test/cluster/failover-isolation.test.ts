// One master of a 3-master cluster stops answering (SIGSTOP, resumed before the cluster fails
// it over) while a game server sends a 10-player batch and a 10-player acquire spread over the
// masters (issue 40, item 1): each answers 200 with every player's own outcome, the players on
// the healthy masters written at once (well under the command timeout the stopped master's
// players wait), the others 503 STORAGE_UNAVAILABLE or OUTCOME_UNKNOWN each with the answer's
// Retry-After; a retry with the same Idempotency-Key writes only those, once.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { PlayerDataClient } from '../../clients/typescript/src/index.js';
import { Cluster, Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { startCluster, workspaceOffVictim, type ClusterNode, type TestCluster } from '../support/cluster.js';
import { client, startTestService, type ApiResponse } from '../support/service.js';

const COMMAND_TIMEOUT_MS = 1000;
/** The healthy masters' players are written within this of the request: well under the command timeout. */
const PROMPT_MS = COMMAND_TIMEOUT_MS / 2;
const FAILED = ['STORAGE_UNAVAILABLE', 'OUTCOME_UNKNOWN'];

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

describe('one master stops answering: a many-player request fails only its players (issue 40)', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let service: RunningService;
  let admin: Cluster;
  let victim: ClusterNode;
  let ws: CreatedWorkspace;
  let api: ReturnType<typeof client>;

  before(async () => {
    cluster = await startCluster();
    service = await startTestService({
      REDIS_CLUSTER_NODES: cluster.seeds,
      RATE_LIMIT_PRO: '100000',
      REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
    });
    admin = cluster.client();
    // The stopped master holds neither a subscription, nor the workspace's own keys (its window,
    // totals), nor its API key's record (read again whenever the key cache is): only players.
    ({ victim, ws } = await workspaceOffVictim(cluster, admin, 'isolation'));
    api = client(service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: 1 })).status).to.equal(200);
  });
  after(async () => {
    victim?.redis.process.kill('SIGCONT');
    await service?.close();
    admin?.disconnect();
    await cluster?.stop();
  });

  /** 10 players: 3 on the stopped master (one first, the worst case before), 7 on the others. */
  async function spreadPlayers(prefix: string): Promise<{ userIds: string[]; onVictim: Set<string> }> {
    const onVictim: string[] = [];
    const healthy: string[] = [];
    for (let i = 0; onVictim.length < 3 || healthy.length < 7; i++) {
      const userId = `${prefix}${i}`;
      const onIt = (await cluster.masterOf(keys.player(ws.workspaceId, userId))) === victim.port;
      if (onIt && onVictim.length < 3) onVictim.push(userId);
      if (!onIt && healthy.length < 7) healthy.push(userId);
    }
    const userIds = [onVictim[0]!, ...healthy.slice(0, 3), onVictim[1]!, ...healthy.slice(3), onVictim[2]!];
    return { userIds, onVictim: new Set(onVictim) };
  }

  /** An Idempotency-Key whose claim is not on the stopped master. */
  async function keyOffVictim(prefix: string): Promise<string> {
    for (let i = 0; ; i++) {
      const key = `${prefix}-${i}`;
      if ((await cluster.masterOf(keys.idempotencyClaim(ws.workspaceId, sha256(key)))) !== victim.port) return key;
    }
  }

  /**
   * Runs `send` with the victim master stopped, polling the healthy players' hashes: the answer,
   * and how long after sending the last healthy player appeared in Redis.
   */
  async function withVictimStopped<T>(healthy: string[], send: () => Promise<T>, resumeAfterMs?: number): Promise<{ res: T; writtenWithinMs: number }> {
    victim.redis.process.kill('SIGSTOP');
    // Resumed at the latest after a few command timeouts, so that an answer waiting on the stopped
    // master fails its assertions instead of holding every later test (each 90 s) on a loaded run.
    const resume = setTimeout(() => victim.redis.process.kill('SIGCONT'), resumeAfterMs ?? COMMAND_TIMEOUT_MS * 4);
    const started = Date.now();
    let writtenWithinMs = Infinity;
    let answered = false;
    const poll = (async () => {
      const pending = new Set(healthy);
      while (pending.size > 0 && !answered) {
        for (const userId of [...pending]) {
          if ((await admin.exists(keys.player(ws.workspaceId, userId))) === 1) pending.delete(userId);
        }
        if (pending.size === 0) writtenWithinMs = Date.now() - started;
        else await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      const res = await send();
      answered = true;
      await poll;
      return { res, writtenWithinMs };
    } finally {
      clearTimeout(resume);
      victim.redis.process.kill('SIGCONT');
      answered = true;
    }
  }

  function expectPerPlayer(res: ApiResponse, userIds: string[], onVictim: Set<string>): void {
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.get('retry-after')).to.equal('1');
    const players = res.body.data.players as Array<{ userId: string; success: boolean; status?: number; code?: string }>;
    expect(players.map((p) => p.userId)).to.deep.equal(userIds);
    for (const player of players) {
      if (onVictim.has(player.userId)) {
        expect(player, player.userId).to.include({ success: false, status: 503 });
        expect(FAILED, player.userId).to.include(player.code);
      } else {
        expect(player, player.userId).to.include({ success: true });
      }
    }
  }

  it('a 10-player batch: 200, the healthy players written at once, the others retried with the same key, once', async () => {
    const { userIds, onVictim } = await spreadPlayers('b');
    const healthy = userIds.filter((u) => !onVictim.has(u));
    const body = { players: userIds.map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 1 }] })) };
    const idempotencyKey = await keyOffVictim('batch');
    const headers = { 'idempotency-key': idempotencyKey };
    const { res, writtenWithinMs } = await withVictimStopped(healthy, () => api.post('/data/batch', body, { headers }));
    expectPerPlayer(res, userIds, onVictim);
    expect(writtenWithinMs, 'the healthy masters\u2019 players written').to.be.below(PROMPT_MS);

    await cluster.waitHealthy();
    const retried = await api.post('/data/batch', body, { headers });
    expect(retried.status).to.equal(200);
    for (const player of retried.body.data.players) expect(player, player.userId).to.include({ success: true, version: 1 });
    for (const userId of userIds) {
      expect((await api.get(`/data?userId=${userId}&key=n`)).body.data.value, userId).to.equal(1);
    }
  });

  it('a 10-player acquire with load: 200, the healthy players held at once, the others acquired again after', async () => {
    const { userIds, onVictim } = await spreadPlayers('a');
    const healthy = userIds.filter((u) => !onVictim.has(u));
    const body = { players: userIds, owner: 'server-1', load: true };
    const { res, writtenWithinMs } = await withVictimStopped(healthy, () => api.post('/sessions/acquire', body));
    expectPerPlayer(res, userIds, onVictim);
    for (const player of res.body.data.players) if (player.success) expect(player.sessionId).to.match(/^ses_/);
    expect(writtenWithinMs, 'the healthy masters\u2019 players held').to.be.below(PROMPT_MS);

    await cluster.waitHealthy();
    const again = await api.post('/sessions/acquire', { ...body, players: [...onVictim] });
    expect(again.status).to.equal(200);
    for (const player of again.body.data.players) expect(player, player.userId).to.include({ success: true, owner: 'server-1' });
  });

  it('the TypeScript client sends again only for the players that failed, and each is written once', async () => {
    const { userIds, onVictim } = await spreadPlayers('c');
    const healthy = userIds.filter((u) => !onVictim.has(u));
    const playerData = new PlayerDataClient({ baseUrl: service.baseUrl, apiKey: ws.apiKey, retry: { attempts: 4, maxDelayMs: 1000 } });
    const idempotencyKey = await keyOffVictim('client');
    const players = userIds.map((userId) => ({ userId, ops: [{ op: 'increment' as const, key: 'n', amount: 1 }] }));
    // The master answers again after the first answer (about the command timeout), before the
    // client's next try (its Retry-After, 1 s).
    const { res: outcomes, writtenWithinMs } = await withVictimStopped(
      healthy,
      () => playerData.batchPlayers(players, { idempotencyKey }),
      COMMAND_TIMEOUT_MS + 400,
    );
    expect(writtenWithinMs).to.be.below(PROMPT_MS);
    expect(outcomes.map((o) => [o.userId, o.success])).to.deep.equal(userIds.map((u) => [u, true]));
    for (const outcome of outcomes) if (outcome.success) expect(outcome.version, outcome.userId).to.equal(1);
    for (const userId of userIds) {
      expect((await api.get(`/data?userId=${userId}&key=n`)).body.data.value, userId).to.equal(1);
    }
  });

  it('a request whose Idempotency-Key is claimed on the failing master waits out its failover, not failing its healthy players', async () => {
    // 10 players on the healthy masters; the key's claim on the stopped one, which answers again
    // after 2.5 s (a failover takes 4-5 s; IDEMPOTENCY_CLAIM_FAILOVER_MS is 8 s). Before the
    // wait, the whole request was 503 after the command timeout, no player written.
    const userIds: string[] = [];
    for (let i = 0; userIds.length < 10; i++) {
      if ((await cluster.masterOf(keys.player(ws.workspaceId, `k${i}`))) !== victim.port) userIds.push(`k${i}`);
    }
    let idempotencyKey = '';
    for (let i = 0; !idempotencyKey; i++) {
      if ((await cluster.masterOf(keys.idempotencyClaim(ws.workspaceId, sha256(`on-victim-${i}`)))) === victim.port) idempotencyKey = `on-victim-${i}`;
    }
    const body = { players: userIds.map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 1 }] })) };
    const headers = { 'idempotency-key': idempotencyKey };
    const started = Date.now();
    const { res } = await withVictimStopped(userIds, () => api.post('/data/batch', body, { headers }), 2500);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(Date.now() - started, 'it waited for the claim').to.be.above(2000);
    for (const player of res.body.data.players) expect(player, player.userId).to.include({ success: true, version: 1 });
    const replayed = await api.post('/data/batch', body, { headers });
    expect(replayed.status).to.equal(200);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    for (const userId of userIds) {
      expect((await api.get(`/data?userId=${userId}&key=n`)).body.data.value, userId).to.equal(1);
    }
  });
});
