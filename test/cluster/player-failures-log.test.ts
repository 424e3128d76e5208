// A many-player request answered 200 whose players on a stopped master failed alone (issue 40,
// item 3): those failures are an operator's to see as a whole request's 503 would be, counted in
// pds_redis_failover_events_total and logged at warn through the failover log (a line per kind a
// second), and the request's own log line counts its refused players by status and code. Before,
// a 200 hid them: nothing logged, nothing counted.
import { expect } from 'chai';
import { Redis, type Cluster } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { createLogger } from '../../src/logger.js';
import { metrics } from '../../src/metrics.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { startCluster, workspaceOffVictim, type ClusterNode, type TestCluster } from '../support/cluster.js';
import { LogCapture } from '../support/log-capture.js';
import { client, testConfig } from '../support/service.js';

async function failoverEvents(): Promise<number> {
  return (await metrics.redisFailoverEvents.get()).values.reduce((sum, v) => sum + v.value, 0);
}

describe('the players of a 200 that failed alone for their master are logged and counted (issue 40)', function () {
  this.timeout(90_000);
  let cluster: TestCluster;
  let service: RunningService;
  let admin: Cluster;
  let victim: ClusterNode;
  let ws: CreatedWorkspace;
  let api: ReturnType<typeof client>;
  const capture = new LogCapture();

  before(async () => {
    cluster = await startCluster();
    const config = testConfig({ REDIS_CLUSTER_NODES: cluster.seeds, RATE_LIMIT_PRO: '100000', REDIS_COMMAND_TIMEOUT_MS: '1000', LOG_LEVEL: 'info' });
    service = await startService(config, createLogger(config, capture));
    admin = cluster.client();
    ({ victim, ws } = await workspaceOffVictim(cluster, admin, 'refusals'));
    api = client(service, ws.apiKey);
    expect((await api.post('/data/set', { userId: 'warm', key: 'k', value: 1 })).status).to.equal(200);
  });
  after(async () => {
    victim?.redis.process.kill('SIGCONT');
    await service?.close();
    admin?.disconnect();
    await cluster?.stop();
  });

  /** 2 players on the stopped master, 3 on the others. */
  async function players(prefix: string): Promise<{ userIds: string[]; onVictim: number }> {
    const on: string[] = [];
    const off: string[] = [];
    for (let i = 0; on.length < 2 || off.length < 3; i++) {
      const userId = `${prefix}${i}`;
      if ((await cluster.masterOf(keys.player(ws.workspaceId, userId))) === victim.port) {
        if (on.length < 2) on.push(userId);
      } else if (off.length < 3) off.push(userId);
    }
    return { userIds: [...off, ...on], onVictim: on.length };
  }

  async function withVictimStopped<T>(send: () => Promise<T>): Promise<T> {
    victim.redis.process.kill('SIGSTOP');
    try {
      return await send();
    } finally {
      victim.redis.process.kill('SIGCONT');
    }
  }

  /** The request's own log line and the failover log's line for it. */
  function linesOf(requestId: string): { request: Record<string, any> | undefined; failover: Record<string, any> | undefined } {
    const parsed = capture.lines.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l['requestId'] === requestId);
    return { request: parsed.find((l) => l['msg'] === 'request'), failover: parsed.find((l) => l['level'] === 40) };
  }

  for (const [name, path, body] of [
    ['a batch', '/data/batch', (userIds: string[]) => ({ players: userIds.map((userId) => ({ userId, ops: [{ op: 'increment', key: 'n' }] })) })],
    ['an acquire', '/sessions/acquire', (userIds: string[]) => ({ players: userIds, owner: 'server-1' })],
  ] as const) {
    it(`${name}: 200, its failed players counted and logged at warn, its log line counting them by code`, async () => {
      await cluster.waitHealthy();
      await new Promise((r) => setTimeout(r, 1100)); // a new second of the failover log's budget
      const { userIds, onVictim } = await players(name === 'a batch' ? 'b' : 'a');
      const before = await failoverEvents();
      const res = await withVictimStopped(() => api.post(path, body(userIds)));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const failed = (res.body.data.players as Array<{ success: boolean; status?: number; code?: string }>).filter((p) => !p.success);
      expect(failed.length).to.equal(onVictim);
      const { request, failover } = linesOf(res.headers.get('x-request-id')!);
      expect(request?.['status']).to.equal(200);
      const byCode: Record<string, number> = {};
      for (const p of failed) byCode[`${p.status} ${p.code}`] = (byCode[`${p.status} ${p.code}`] ?? 0) + 1;
      expect(request?.['playersRefused'], 'the request line counts its refused players').to.deep.equal(byCode);
      expect(failover, 'a warn line for the failed players').to.include({ players: onVictim, status: 503 });
      expect(['STORAGE_UNAVAILABLE', 'OUTCOME_UNKNOWN']).to.include(failover?.['code']);
      expect(await failoverEvents(), 'counted in pds_redis_failover_events_total').to.be.above(before);
    });
  }
});
