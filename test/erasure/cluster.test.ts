// Erasure on a Redis Cluster (3 masters, 1 replica each): the webhook's job finds the player's
// keys by its slot's own key list and erases them all, an erasure in every workspace reaches
// players in other slots, the job's records (one slot) and tombstones work, a player named
// after the user by the workspace's template (Player_<id>) goes too, in its own slot, an import
// of an export taken before the erasure skips them, no node ever answers CROSSSLOT, and the
// erasure's checklist walked over every master finds nothing of the player.
import { expect } from 'chai';
import { Cluster } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { scanMatching } from '../../src/store/redis/scan.js';
import { crossSlotErrors, startCluster, type TestCluster } from '../support/cluster.js';
import { ERASURE_ENV, erasureNotification, freshGameId, freshUserId, postWebhook } from '../support/erasure.js';
import { putEverywhereEraseAndWalk } from '../support/erasure-walk.js';
import { call, fetchRecorded, startTestService } from '../support/service.js';

const ADMIN_TOKEN = 'cluster-erasure-admin-token-0123';

describe('erasure on a Redis Cluster (3 masters + 3 replicas)', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let service: RunningService;
  let redis: Cluster;

  before(async () => {
    cluster = await startCluster();
    service = await startTestService({
      REDIS_CLUSTER_NODES: cluster.seeds,
      ADMIN_TOKEN,
      ...ERASURE_ENV,
    });
    redis = cluster.client();
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
    await cluster?.stop();
  });

  const admin = (method: string, path: string, body?: unknown, contentType = 'application/json') =>
    fetchRecorded(`${service.opsUrl}/admin/v1${path}`, method, { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': contentType }, typeof body === 'string' ? body : body === undefined ? undefined : JSON.stringify(body));

  async function tagged(workspaceId: string, userId: number | string): Promise<string[]> {
    const found: string[] = [];
    await scanMatching(redis, keys.playerTagPattern(workspaceId, String(userId)), async (_node, page) => {
      found.push(...page);
    });
    return found;
  }

  async function waitDone(jobId: string, states = ['done']): Promise<Record<string, string>> {
    for (let i = 0; i < 300; i++) {
      const fields = await redis.hgetall(keys.erasureJob(jobId));
      if (states.includes(fields['state'] ?? '')) return fields;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`job ${jobId} not ${states.join('/')}`);
  }

  it('erases everything of the player, in its slot and across workspaces, and a backup does not bring it back', async () => {
    const crossSlotBefore = await crossSlotErrors(cluster);
    const created = await Promise.all([1, 2].map((i) => admin('POST', '/workspaces', { name: `cluster-erasure-${i}`, plan: 'pro' })));
    const [a, b] = created.map((r) => r.body.data as { workspaceId: string; apiKey: string });
    const gameId = freshGameId();
    expect((await admin('PUT', `/workspaces/${a!.workspaceId}/games`, { gameIds: [gameId] })).status).to.equal(200);
    expect((await admin('PUT', `/workspaces/${a!.workspaceId}/erasure-players`, { templates: ['Player_{userId}'] })).status).to.equal(200);
    const userId = freshUserId();
    const profile = `Player_${userId}`;
    const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) => call(service, 'POST', path, { key, body, headers });
    for (const ws of [a!, b!]) {
      for (const value of [1, 2]) expect((await post(ws.apiKey, '/data/set', { userId, key: 'coins', value }, { 'idempotency-key': `k-${value}` })).status).to.equal(200);
      await post(ws.apiKey, '/data/set', { userId: userId + 1, key: 'coins', value: 1 });
      expect((await post(ws.apiKey, '/leaderboards/wins/set', { userId: profile, score: 3 }, { 'idempotency-key': `p-${userId}` })).status).to.equal(200);
      expect((await post(ws.apiKey, '/data/set', { userId: profile, key: 'Coins', value: 1 })).status).to.equal(200);
    }
    await post(a!.apiKey, '/sessions/acquire', { userId, owner: 'server' });
    await redis.set(`${keys.player(a!.workspaceId, String(userId))}:msg:1`, 'waiting message');
    const exported = (await admin('GET', `/workspaces/${a!.workspaceId}/export`)).text;
    expect((await tagged(a!.workspaceId, userId)).length).to.be.at.least(4);

    expect(await redis.hget(keys.boardMembers(a!.workspaceId, 'wins', 'all'), profile)).to.be.a('string');
    const hook = await postWebhook(service.baseUrl, erasureNotification(userId, [gameId]));
    expect(hook.status, hook.text).to.equal(200);
    await waitDone(hook.body.data.jobId);
    expect(await tagged(a!.workspaceId, userId)).to.deep.equal([]);
    expect((await tagged(b!.workspaceId, userId)).length).to.be.greaterThan(0);
    expect((await tagged(a!.workspaceId, userId + 1)).length).to.be.greaterThan(0);
    expect(await tagged(a!.workspaceId, profile)).to.deep.equal([]);
    expect(await redis.hget(keys.boardMembers(a!.workspaceId, 'wins', 'all'), profile)).to.equal(null);
    expect((await tagged(b!.workspaceId, profile)).length).to.be.greaterThan(0);

    const imported = await admin('POST', `/workspaces/${a!.workspaceId}/import?mode=overwrite`, exported, 'application/x-ndjson');
    expect(imported.body.data).to.deep.include({ erased: 2 });
    expect(await tagged(a!.workspaceId, userId)).to.deep.equal([]);
    expect(await tagged(a!.workspaceId, profile)).to.deep.equal([]);

    const every = await admin('POST', '/erasures', { userId, allWorkspaces: true });
    expect(every.status, every.text).to.equal(201);
    await waitDone(every.body.data.jobId);
    expect(await tagged(b!.workspaceId, userId)).to.deep.equal([]);
    expect((await tagged(b!.workspaceId, userId + 1)).length).to.be.greaterThan(0);
    // Workspace b has no template: its Player_<id> is another player there.
    expect((await tagged(b!.workspaceId, profile)).length).to.be.greaterThan(0);
    expect(await crossSlotErrors(cluster)).to.equal(crossSlotBefore);
  });

  it('leaves no key on any master holding the player\'s user id or data, after putting it everywhere (test/support/erasure-walk.ts)', async () => {
    const crossSlotBefore = await crossSlotErrors(cluster);
    const walk = await putEverywhereEraseAndWalk(service, redis, ADMIN_TOKEN);
    expect(walk.before.map((f) => f.what)).to.include.members(['userId', 'data', 'message', 'score', 'level']);
    expect(walk.after, JSON.stringify(walk.after)).to.deep.equal([]);
    expect(await crossSlotErrors(cluster)).to.equal(crossSlotBefore);
  });
});
