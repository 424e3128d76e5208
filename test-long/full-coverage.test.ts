// A master killed with kill -9 while players on the other masters are written through the
// service: with `cluster-require-full-coverage no` (docs/deployment.md asks it of a production
// cluster; test/support/cluster.ts sets it) every one of those writes succeeds. With Redis's
// default `yes`, every master answered CLUSTERDOWN from the moment it flagged the dead master
// FAIL until its replica was promoted (0.5-1 s here), so players whose masters stayed healthy
// failed in every failover: the fleet test's last healthy-player failures (issue 40). In
// test:long: a real failover under a stream of writes (a run of its own hung once in four on a
// loaded machine, which npm test cannot afford).
import { expect } from 'chai';
import { Redis, type Cluster } from 'ioredis';
import { keys } from '../src/store/keys.js';
import type { RunningService } from '../src/server.js';
import { startCluster, workspaceOffVictim, type TestCluster } from '../test/support/cluster.js';
import { client, startTestService } from '../test/support/service.js';

describe('a master killed: the players of the other masters are written all along (cluster-require-full-coverage no)', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  let service: RunningService;
  let admin: Cluster;

  before(async () => {
    cluster = await startCluster();
    service = await startTestService({ REDIS_CLUSTER_NODES: cluster.seeds, RATE_LIMIT_PRO: '1000000', REDIS_COMMAND_TIMEOUT_MS: '1000' });
    admin = cluster.client();
  });
  after(async () => {
    await service?.close();
    admin?.disconnect();
    await cluster?.stop();
  });

  it('kill -9 of a master without the workspace\'s keys: no write to another master\'s player fails, and its own slots come back', async () => {
    const { victim, ws } = await workspaceOffVictim(cluster, admin, 'coverage');
    const victimPort = victim.port;
    const onVictim = async (key: string) => (await cluster.masterOf(key)) === victimPort;
    const api = client(service, ws.apiKey);
    const healthy: string[] = [];
    let victimPlayer = '';
    for (let i = 0; healthy.length < 8 || !victimPlayer; i++) {
      if (await onVictim(keys.player(ws.workspaceId, `p${i}`))) victimPlayer ||= `p${i}`;
      else if (healthy.length < 8) healthy.push(`p${i}`);
    }
    for (const userId of [...healthy, victimPlayer]) expect((await api.post('/data/increment', { userId, key: 'n' })).status).to.equal(200);

    const failed: string[] = [];
    let writes = 0;
    let stop = false;
    // One writer per healthy player, a write every 20 ms, from the kill until its slots are back and 1 s after.
    const writers = healthy.map(async (userId) => {
      while (!stop) {
        const res = await api.post('/data/increment', { userId, key: 'n' });
        writes++;
        if (res.status !== 200) failed.push(`${userId} ${res.status} ${res.body?.code ?? ''}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const killedAt = Date.now();
    await cluster.nodes.find((n) => n.port === victimPort)!.redis.kill();
    let backAfterMs = Infinity;
    while (Date.now() - killedAt < 20_000) {
      if ((await api.post('/data/increment', { userId: victimPlayer, key: 'n' })).status === 200) {
        backAfterMs = Date.now() - killedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await Promise.all(writers);

    expect(backAfterMs, 'the killed master\u2019s slots written again (a failover happened meanwhile)').to.be.below(20_000);
    expect(writes, 'writes to the healthy masters\u2019 players through the failover').to.be.above(50);
    expect(failed, 'writes to players of healthy masters that failed').to.deep.equal([]);
  });
});
