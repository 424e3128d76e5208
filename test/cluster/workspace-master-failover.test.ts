// The master holding the workspace's own slot stops answering (SIGSTOP, resumed after 2.5 s,
// before the cluster fails it over) while a game server sends a many-player batch with an
// Idempotency-Key whose claim and players are all on the other masters (issue 40). The request
// also reads the claim the release before kept in the workspace's slot (a retry across the
// upgrade that spread the claims must find it): that read waits out the failover as the claim
// does, and the workspace's storage totals, stale by then, are taken as last known (for up to
// STALE_TOTALS_MS past their refresh), so the batch answers 200, each player written once. Before, it failed whole with 503,
// none of its players written: every many-player request with a key, while that master failed
// over (421 of 9,813 healthy players' operations in the fleet test with the window's master killed).
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { Redis, type Cluster } from 'ioredis';
import { AdminOperations, type CreatedWorkspace } from '../../src/admin/operations.js';
import { hashApiKey } from '../../src/domain/api-key.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { startCluster, subscribedNodes, type ClusterNode, type TestCluster } from '../support/cluster.js';
import { client, startTestService } from '../support/service.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

describe('the workspace\'s master stops answering: a many-player request with a key waits it out (issue 40)', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let service: RunningService;
  let admin: Cluster;
  let victim: ClusterNode;

  before(async () => {
    cluster = await startCluster();
    // Totals read again after 2 s: stale by the time the batch comes, so it also needs the
    // workspace's storage totals, which live in the stopped master's slot.
    service = await startTestService({ REDIS_CLUSTER_NODES: cluster.seeds, RATE_LIMIT_PRO: '100000', REDIS_COMMAND_TIMEOUT_MS: '1000', STORAGE_REFRESH_MS: '2000' });
    admin = cluster.client();
  });
  after(async () => {
    victim?.redis.process.kill('SIGCONT');
    await service?.close();
    admin?.disconnect();
    await cluster?.stop();
  });

  it('a 6-player batch whose players and claim are elsewhere: 200 once the master answers again, each written once, then replayed', async () => {
    const subscribed = await subscribedNodes(cluster);
    const port = (await cluster.masters()).find((p) => !subscribed.includes(p));
    if (port === undefined) throw new Error('no master without a subscription');
    victim = cluster.nodes.find((n) => n.port === port)!;
    const on = async (key: string) => (await cluster.masterOf(key)) === port;
    const ops = new AdminOperations(admin);
    let ws: CreatedWorkspace = await ops.createWorkspace({ name: 'window', plan: 'pro' });
    while (!(await on(keys.workspace(ws.workspaceId))) || (await on(keys.apiKey(hashApiKey(ws.apiKey))))) {
      ws = await ops.createWorkspace({ name: 'window', plan: 'pro' });
    }
    expect(await on(keys.legacyIdempotencyClaim(ws.workspaceId, sha256('x'))), 'the old claims live in the workspace\u2019s slot').to.equal(true);
    const api = client(service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: 1 })).status).to.equal(200);
    const userIds: string[] = [];
    for (let i = 0; userIds.length < 6; i++) if (!(await on(keys.player(ws.workspaceId, `u${i}`)))) userIds.push(`u${i}`);
    let idempotencyKey = '';
    for (let i = 0; !idempotencyKey; i++) if (!(await on(keys.idempotencyClaim(ws.workspaceId, sha256(`k-${i}`))))) idempotencyKey = `k-${i}`;
    const body = { players: userIds.map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n', amount: 1 }] })) };
    const headers = { 'idempotency-key': idempotencyKey };

    await new Promise((r) => setTimeout(r, 2100));
    // Read once more, now that the invalidations of the workspaces made above have all arrived: a
    // key lookup that ran while one was on its way is not cached (the key cache's epoch check),
    // and the batch would then read the workspace's record from the stopped master (503).
    expect((await api.get('/data?userId=warm&key=k')).status).to.equal(200);
    victim.redis.process.kill('SIGSTOP');
    const resume = setTimeout(() => victim.redis.process.kill('SIGCONT'), 2500);
    let res;
    try {
      res = await api.post('/data/batch', body, { headers });
    } finally {
      clearTimeout(resume);
      victim.redis.process.kill('SIGCONT');
    }
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    for (const player of res.body.data.players) expect(player, player.userId).to.include({ success: true, version: 1 });
    const replayed = await api.post('/data/batch', body, { headers });
    expect(replayed.status).to.equal(200);
    for (const userId of userIds) expect((await api.get(`/data?userId=${userId}&key=n`)).body.data.value, userId).to.equal(1);
  });
});
