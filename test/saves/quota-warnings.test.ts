// Warnings before the storage quota's wall (saves/quota-warnings.ts): crossing 80% and 95% of a
// workspace's quota, and falling back under, is logged once across two instances writing the
// same workspace, not once per write nor once per instance; the admin API and the overview
// show the share. On a single Redis and on a Redis Cluster (the marker in the workspace's slot,
// the overview's set in {stats}: no CROSSSLOT).
import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { crossSlotErrors, startCluster, type TestCluster } from '../support/cluster.js';
import { LogCapture } from '../support/log-capture.js';
import { client, testConfig, testRedis } from '../support/service.js';

const QUOTA = 50_000;
// History off: a shrinking write frees its bytes at once.
const ENV = {
  ADMIN_TOKEN,
  LOG_LEVEL: 'info',
  HISTORY_MAX_VERSIONS: '0',
  STORAGE_QUOTA_FREE_BYTES: String(QUOTA),
  STORAGE_FLUSH_MS: '50',
  STORAGE_REFRESH_MS: '100',
};
const settle = () => new Promise((r) => setTimeout(r, 300));

/** Two instances, each logging into its own capture. */
function useTwoInstances(env: () => Record<string, string>) {
  const fleet = { services: [] as RunningService[], logs: [] as LogCapture[] };
  before(async () => {
    for (let i = 0; i < 2; i++) {
      const log = new LogCapture();
      const config = testConfig({ ...ENV, ...env() });
      fleet.logs.push(log);
      fleet.services.push(await startService(config, createLogger(config, log)));
    }
  });
  after(async () => {
    await Promise.all(fleet.services.map((s) => s.close()));
  });
  return fleet;
}

/** Up past 80%, past 95%, back under, with writes from both instances at each level. */
async function crossEveryLevel(fleet: { services: RunningService[]; logs: LogCapture[] }, redis: Redis | Cluster): Promise<void> {
  const { services, logs } = fleet;
  const crossings = (workspaceId: string) =>
    logs
      .flatMap((l) => l.lines)
      .map((line) => JSON.parse(line) as { msg: string; workspaceId?: string; time: string })
      .filter((line) => line.workspaceId === workspaceId && /storage quota: workspace/.test(line.msg))
      .sort((a, b) => Date.parse(a.time) - Date.parse(b.time))
      .map((line) => line.msg.replace(`storage quota: workspace ${workspaceId} `, ''));
  const created = await adminCall(services[0]!, 'POST', '/workspaces', { body: { name: 'near the wall', plan: 'free' } });
  expect(created.status).to.equal(201);
  const ws = created.body.data as { workspaceId: string; apiKey: string };
  const apis = services.map((s) => client(s, ws.apiKey));

  // 82% (of Redis bytes, as the quota weighs: 1.2 x counted + 150 B a player): one write, then
  // writes from both instances that stay between 80% and 95%.
  expect((await apis[0]!.post('/data/set', { userId: 'p0', key: 'save', value: 'x'.repeat(34_000) })).status).to.equal(200);
  await settle();
  for (let i = 0; i < 6; i++) {
    expect((await apis[i % 2]!.post('/data/set', { userId: `q${i}`, key: 'k', value: 'y'.repeat(200) })).status).to.equal(200);
    await settle();
  }
  expect(crossings(ws.workspaceId)).to.deep.equal(['passed 80% of its quota']);
  const details = (await adminCall(services[1]!, 'GET', `/workspaces/${ws.workspaceId}`)).body.data.storage;
  expect(details.quotaUsedBytes).to.equal(details.dataRedisBytes);
  expect(details.quotaPercent).to.be.within(84, 90);
  expect(await redis.get(keys.workspaceQuotaLevel(ws.workspaceId))).to.equal('80');

  // 96%, seen by both instances.
  expect((await apis[1]!.post('/data/set', { userId: 'p0', key: 'save', value: 'x'.repeat(37_900) })).status).to.equal(200);
  await settle();
  for (let i = 0; i < 4; i++) {
    await apis[i % 2]!.post('/data/set', { userId: `q${i}`, key: 'k', value: 'z'.repeat(200) });
    await settle();
  }
  expect(crossings(ws.workspaceId)).to.deep.equal(['passed 80% of its quota', 'passed 95% of its quota']);
  const near = (await adminCall(services[0]!, 'GET', '/overview')).body.data.nearQuota as Array<{ workspaceId: string; percent: number }>;
  expect(near.find((w) => w.workspaceId === ws.workspaceId)?.percent).to.be.at.least(95);

  // Back under 80%: once; the marker and the overview's entry go.
  expect((await apis[0]!.post('/data/set', { userId: 'p0', key: 'save', value: 'small' })).status).to.equal(200);
  await settle();
  for (let i = 0; i < 4; i++) {
    await apis[i % 2]!.post('/data/set', { userId: `q${i}`, key: 'k', value: i });
    await settle();
  }
  expect(crossings(ws.workspaceId)).to.deep.equal(['passed 80% of its quota', 'passed 95% of its quota', 'is back under 80% of its quota']);
  expect(await redis.exists(keys.workspaceQuotaLevel(ws.workspaceId))).to.equal(0);
  const after = (await adminCall(services[0]!, 'GET', '/overview')).body.data.nearQuota as Array<{ workspaceId: string }>;
  expect(after.map((w) => w.workspaceId)).not.to.include(ws.workspaceId);
}

describe('safe saves: warnings at 80% and 95% of the storage quota', function () {
  this.timeout(20_000);
  let redis: Redis;
  const fleet = useTwoInstances(() => ({}));
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('logs each crossing once across the fleet, up past 80% and 95% and back under', async () => {
    await crossEveryLevel(fleet, redis);
  });
});

describe('safe saves: warnings at 80% and 95% of the storage quota, on a Redis Cluster', function () {
  this.timeout(60_000);
  let cluster: TestCluster;
  let redis: Cluster;
  before(async () => {
    cluster = await startCluster();
    redis = cluster.client();
  });
  const fleet = useTwoInstances(() => ({ REDIS_CLUSTER_NODES: cluster.seeds }));
  after(async () => {
    redis?.disconnect();
    await cluster?.stop();
  });

  it('logs each crossing once across two instances, with no CROSSSLOT', async () => {
    await crossEveryLevel(fleet, redis);
    expect(await crossSlotErrors(cluster)).to.equal(0);
  });
});
