// Failover on Redis Cluster: kill -9 one master under a steady write load through the service.
// Writes to its slots must resume within 5 s (the replica is promoted after the 2 s node
// timeout), and every write the service acknowledged, before, during and after, must be there.
import { expect } from 'chai';
import { Cluster, Redis } from 'ioredis';
import { AdminOperations } from '../src/admin/operations.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../src/server.js';
import { hashApiKey } from '../src/domain/api-key.js';
import { keys } from '../src/store/keys.js';
import { startCluster, type TestCluster } from '../test/support/cluster.js';
import { startWriteLoad, verifyWrites } from '../test/support/write-load.js';
import { report } from './report.js';

/** Clients in subscriber mode on one node. */
async function pubsubClients(cluster: TestCluster, port: number): Promise<number> {
  const probe = new Redis({ port, host: '127.0.0.1' });
  const list = (await probe.client('LIST')) as string;
  probe.disconnect();
  return list.split('\n').filter((line) => / sub=[1-9]/.test(line)).length;
}

describe('Redis Cluster failover under write load', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  let service: RunningService;
  let admin: Cluster;

  before(async () => {
    cluster = await startCluster();
    const config = loadConfig({
      REDIS_CLUSTER_NODES: cluster.seeds,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: process.env['FAILOVER_LOG'] ?? 'silent',
      RATE_LIMIT_PRO: '1000000000',
    });
    service = await startService(config, createLogger(config));
    admin = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
  });
  after(async () => {
    await service?.close();
    admin?.disconnect();
    await cluster?.stop();
  });

  it('resumes writes within 5 s of kill -9 of a master and loses no acknowledged write', async () => {
    const ws = await new AdminOperations(admin).createWorkspace({ name: 'failover', plan: 'pro' });
    const users = Array.from({ length: 60 }, (_, i) => `u${i}`);
    // The first seed: a master, and the node the service's cache-invalidation subscription is on.
    const masters = await cluster.masters();
    const victimPort = masters.includes(cluster.nodes[0]!.port) ? cluster.nodes[0]!.port : masters[0]!;
    const subscribedBefore = await pubsubClients(cluster, victimPort);
    // Every request also counts against the workspace's rate-limit window, in the {ws} slot:
    // when that slot is on the victim, all of the workspace's requests wait for the failover.
    const workspaceSlotOnVictim = (await cluster.masterOf(keys.rateLimit(ws.workspaceId))) === victimPort;
    // The kill also cuts the invalidation subscription, so the key cache is dropped and every
    // request reads the key's record again: its slot matters too until the failover is done.
    const apiKeySlotOnVictim = (await cluster.masterOf(keys.apiKey(hashApiKey(ws.apiKey)))) === victimPort;
    const owner = new Map<string, number>();
    for (const user of users) owner.set(user, await cluster.masterOf(keys.player(ws.workspaceId, user)));
    const victimUsers = new Set(users.filter((u) => owner.get(u) === victimPort));
    expect(victimUsers.size).to.be.greaterThan(0);

    const load = startWriteLoad({ baseUrl: service.baseUrl, apiKey: ws.apiKey, users, workers: 16 });
    await new Promise((r) => setTimeout(r, 2000));
    const victim = cluster.nodes.find((n) => n.port === victimPort)!;
    const killedAt = Date.now();
    await victim.redis.kill();

    // A probe write to the victim's slots tells when they are served again.
    let resumedAt: number | undefined;
    const deadline = killedAt + 20_000;
    const probeUser = [...victimUsers][0]!;
    for (;;) {
      const res = await fetch(service.baseUrl + '/data/increment', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ws.apiKey },
        body: JSON.stringify({ userId: probeUser, key: 'probe' }),
      }).catch(() => undefined);
      if (res?.status === 200) {
        resumedAt = Date.now();
        break;
      }
      if (Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 3000));
    const result = await load.stop();
    expect(resumedAt, 'writes to the failed master\'s slots never resumed').to.not.equal(undefined);

    const after = result.outcomes.filter((o) => o.at > killedAt);
    // Resumed: the first write to the victim's slots that was sent after the kill and succeeded.
    const resumed = after
      .filter((o) => o.ok && victimUsers.has(o.user) && o.sentAt > killedAt)
      .reduce<number | undefined>((min, o) => Math.min(min ?? o.at, o.at), undefined);
    const failed = result.outcomes.filter((o) => !o.ok);
    const failedOthers = failed.filter((o) => !victimUsers.has(o.user));
    const lastFailure = failed.at(-1)?.at ?? killedAt;

    await cluster.waitHealthy();
    const verification = await verifyWrites(admin, ws.workspaceId, result);
    const figures = {
      workspaceSlotOnVictim,
      apiKeySlotOnVictim,
      requests: result.outcomes.length,
      acknowledgedWrites: verification.acknowledged,
      failedRequests: failed.length,
      failedRequestsToOtherMasters: failedOthers.length,
      resumeMs: resumed === undefined ? null : resumed - killedAt,
      probeResumeMs: resumedAt! - killedAt,
      lastFailureAfterKillMs: lastFailure - killedAt,
      missingSets: verification.missingSets.length,
      missingIncrements: verification.missingIncrements,
      overcountedCounters: verification.overcounted,
    };
    // The subscription moved to a live node, and a revocation reaches the service's cache again.
    const key = await new AdminOperations(admin).createKey(ws.workspaceId);
    const ping = () => fetch(service.baseUrl + '/ping', { headers: { 'x-api-key': key.apiKey } }).then((r) => r.status);
    expect(await ping()).to.equal(200);
    await new AdminOperations(admin).revokeKey(key.keyId);
    const revokedAt = Date.now();
    while ((await ping()) !== 401) {
      expect(Date.now() - revokedAt, 'a revocation did not reach the service after the failover').to.be.below(1000);
      await new Promise((r) => setTimeout(r, 10));
    }
    Object.assign(figures, { subscriptionsOnVictimBefore: subscribedBefore, revocationSeenAfterFailoverMs: Date.now() - revokedAt });
    report('cluster-failover', figures);
    if (process.env['FAILOVER_TRACE']) {
      for (const o of failedOthers) process.stdout.write(`other ${o.sentAt - killedAt} -> ${o.at - killedAt} ${o.status}\n`);
      for (const o of after.filter((o) => victimUsers.has(o.user)).slice(0, 400)) {
        process.stdout.write(`${o.sentAt - killedAt} -> ${o.at - killedAt} ${o.status}\n`);
      }
    }
    expect(resumed! - killedAt).to.be.below(5000);
    expect(verification.missingSets).to.deep.equal([]);
    expect(verification.missingIncrements).to.equal(0);
    expect(verification.overcounted).to.equal(0);
    // A workspace's writes take turns per node (saves/player-writes.ts): writes to the other
    // masters do not wait behind one to the failed master. When they did (one turn for the
    // workspace), 22-40 of them failed (503 after the turn's wait); since, 0-2.
    if (!workspaceSlotOnVictim && !apiKeySlotOnVictim) expect(failedOthers.length, 'writes to other masters that failed').to.be.at.most(10);
  });
});
