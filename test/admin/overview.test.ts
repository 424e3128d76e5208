// The console's overview (GET /admin/v1/overview): what the instances publish to Redis, added up
// per minute (requests, 429s, 5xx, latency percentiles), the busiest workspaces, the instances
// alive, Redis memory, recent bans in force; and GET /admin/v1/gate. The service's clock is set
// to a minute of its own, far from now, so other tests' traffic in the shared Redis never mixes in.
import { expect } from 'chai';
import { BanOperations } from '../../src/admin/bans.js';
import { percentile } from '../../src/admin/overview.js';
import { keys } from '../../src/store/keys.js';
import { addToStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { LATENCY_BOUNDS_MS } from '../../src/store/installation/traffic-stats.js';
import { freshIPv4 } from '../support/gate.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { call, testClock, useService } from '../support/service.js';
import { randomId } from '../support/random.js';

describe('admin API: the overview', function () {
  this.timeout(30_000);
  // A minute no other test writes: some day within the next ten years, at :30 s.
  const day = 86_400_000 * (1 + Math.floor(Math.random() * 3650));
  const clock = testClock(Date.now() - (Date.now() % 60_000) + day + 30_000);
  const h = useService({ ADMIN_TOKEN, RATE_LIMIT_FREE: '3', STATS_FLUSH_MS: '60000', RATE_LIMIT_LEASE_AHEAD: '0' }, { clock: clock.now });

  it("adds up the last hour's answers per minute, with 429s, 5xx, percentiles and the busiest workspaces", async () => {
    const busy = await testOps(h.redis).createWorkspace({ name: `busy-${randomId()}`, plan: 'free' });
    const quiet = await testOps(h.redis).createWorkspace({ name: `quiet-${randomId()}`, plan: 'pro' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(h.service, 'GET', '/ping', { key: busy.apiKey })).status);
    expect(statuses.filter((s) => s === 429)).to.have.length(2);
    await call(h.service, 'GET', '/ping', { key: quiet.apiKey });
    // A 5xx is rare on purpose: counted as the middleware would count one.
    h.service.traffic.count(clock.now(), 503, 12, undefined);
    clock.advance(60_000);
    await call(h.service, 'GET', '/ping', { key: quiet.apiKey });
    await h.service.traffic.flush();

    const res = await adminCall(h.service, 'GET', '/overview');
    expect(res.status).to.equal(200);
    const o = res.body.data;
    expect(o.minutes).to.have.length(60);
    const [before, last] = o.minutes.slice(-2);
    expect(before).to.include({ requests: 7, limited: 2, errors: 1 });
    expect(last).to.include({ requests: 1, limited: 0, errors: 0 });
    expect(Date.parse(last.at)).to.equal(clock.now() - (clock.now() % 60_000));
    expect(before.p50Ms).to.be.a('number').and.to.be.at.most(before.p99Ms);
    expect(o.totals).to.include({ requests: 8, limited: 2, errors: 1 });
    expect(o.busiestByRequests.slice(0, 2)).to.deep.equal([
      { workspaceId: busy.workspaceId, name: busy.name, value: 5 },
      { workspaceId: quiet.workspaceId, name: quiet.name, value: 2 },
    ]);
    expect(o.instances.map((i: { id: string }) => i.id)).to.deep.equal([h.service.traffic.instanceId]);
    expect(o.instances[0]).to.include({ pid: process.pid, gateMode: 'off' });
    expect(o.memory.usedBytes).to.be.greaterThan(0);
    expect(o.memory.nodes).to.equal(1);
    expect(o.gateMode).to.equal('off');
  });

  it('ranks workspaces by what they store, and forgets a deleted one', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `big-${randomId()}` });
    const put = await adminCall(h.service, 'PUT', `/workspaces/${ws.workspaceId}/players/u1`, { body: { key: 'save', value: 'x'.repeat(2000) } });
    expect(put.status).to.equal(200);
    const stored = Number(await h.redis.hget(keys.workspaceStorage(ws.workspaceId), 'bytes'));
    expect(stored).to.be.greaterThan(2000);
    expect(Number(await h.redis.zscore(keys.statsStorage(), ws.workspaceId))).to.equal(stored);
    await testOps(h.redis).deleteWorkspace(ws.workspaceId);
    expect(await h.redis.zscore(keys.statsStorage(), ws.workspaceId)).to.equal(null);
  });

  it('lists no workspace whose total is below 0 (a removal added up before the writes it undoes are flushed)', async () => {
    const ws = await testOps(h.redis).createWorkspace({ name: `erased-${randomId()}` });
    // What an erasure does when the player's writes still wait in the instance's storage flush.
    await addToStorageTotals(h.redis, ws.workspaceId, { bytes: -500 });
    expect(Number(await h.redis.zscore(keys.statsStorage(), ws.workspaceId))).to.equal(-500);
    const largest = (await adminCall(h.service, 'GET', '/overview')).body.data.busiestByStorage as Array<{ workspaceId: string; value: number }>;
    expect(largest.map((w) => w.workspaceId)).to.not.include(ws.workspaceId);
    expect(largest.filter((w) => w.value <= 0)).to.deep.equal([]);
  });

  it('shows the newest bans still in force, and the gate\'s mode with its meaning', async () => {
    const bans = new BanOperations(h.redis);
    const kept = freshIPv4();
    const lifted = freshIPv4();
    await bans.addBan({ address: kept, reason: 'overview' });
    await bans.addBan({ address: lifted });
    await bans.removeBan(lifted);
    const recent = (await adminCall(h.service, 'GET', '/overview')).body.data.recentBans as Array<{ address: string; source: string }>;
    expect(recent.map((b) => b.address)).to.include(kept).and.not.include(lifted);
    expect(recent.find((b) => b.address === kept)).to.include({ source: 'operator' });
    await bans.removeBan(kept);

    const gate = await adminCall(h.service, 'GET', '/gate');
    expect(gate.status).to.equal(200);
    expect(gate.body.data).to.include({ mode: 'off' });
    expect(gate.body.data.meaning).to.match(/operator still apply/);
  });

  it('reads percentiles from the histogram buckets', () => {
    const buckets = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
    expect(percentile(buckets, 0.5)).to.equal(null);
    buckets[0] = 50; // 0-0.5 ms
    buckets[6] = 49; // 7.5-10 ms
    buckets[11] = 1; // 60-100 ms
    expect(percentile(buckets, 0.5)).to.equal(0.5);
    expect(percentile(buckets, 0.99)).to.equal(10);
    expect(percentile(buckets, 1)).to.equal(100);
  });
});
