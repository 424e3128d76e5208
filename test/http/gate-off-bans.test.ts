// A ban is a ban (issue 31): an operator's ban applies in every GATE_MODE, `off` (the default)
// included; the mode governs detection and the gate's own automatic bans, which `off` sets aside.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanOperations } from '../../src/admin/bans.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { BanStore } from '../../src/store/installation/bans.js';
import { CURL_UA, freshIPv4, PLATFORM, via, waitFor } from '../support/gate.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

describe('platform-only access: bans with the gate off', () => {
  let redis: Redis;
  let bans: BanOperations;
  let ws: CreatedWorkspace;
  const running: RunningService[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startTestService({ TRUST_PROXY_HOPS: '1', ...env });
    running.push(service);
    return service;
  };
  const ping = (service: RunningService, address: string, headers: Record<string, string> = PLATFORM) =>
    call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(address, headers) });

  before(async () => {
    redis = testRedis();
    bans = new BanOperations(redis);
    ws = await newWorkspace(redis, 'pro', 'Gate off');
  });
  after(async () => {
    await Promise.all(running.map((s) => s.close()));
    redis.disconnect();
  });

  it("refuses an operator's ban with GATE_MODE=off, made before and after the start, and lets the address in once it is lifted", async () => {
    const before = freshIPv4();
    await bans.addBan({ address: before, reason: 'made before the start' });
    const service = await start({ GATE_MODE: 'off' });
    expect(service.gate.mode).to.equal('off');
    const refused = await ping(service, before);
    expect(refused.status).to.equal(403);
    expect(refused.body.error).to.include(`${before} is banned`);

    const after = freshIPv4();
    expect((await ping(service, after)).status).to.equal(200);
    await bans.addBan({ address: after, reason: 'made while running' });
    expect(await waitFor(async () => (await ping(service, after)).status === 403)).to.equal(true);

    await bans.removeBan(before);
    expect(await waitFor(async () => (await ping(service, before)).status === 200)).to.equal(true);
    await bans.removeBan(after);
  });

  it("sets the gate's own bans aside with GATE_MODE=off, and applies them again in report mode", async () => {
    const address = freshIPv4();
    await new BanStore(redis).add({ address, bannedAt: new Date().toISOString(), source: 'gate', reasons: ['user-agent'] });
    const off = await start({ GATE_MODE: 'off' });
    // No check runs with the gate off: a caller that is not the platform passes too.
    expect((await ping(off, address, { 'user-agent': CURL_UA })).status).to.equal(200);
    const report = await start({ GATE_MODE: 'report' });
    expect((await ping(report, address)).status).to.equal(403);
    await bans.removeBan(address);
  });

  it('passes an allow-listed address over an operator ban of it in the off mode too', async () => {
    const service = await start({ GATE_MODE: 'off' });
    const address = freshIPv4();
    await bans.addBan({ address });
    expect(await waitFor(async () => (await ping(service, address)).status === 403)).to.equal(true);
    // Allow-listing lifts the bans it covers, on every instance.
    await bans.allow({ entry: address, note: 'our monitor' });
    expect(await waitFor(async () => (await ping(service, address)).status === 200)).to.equal(true);
    await bans.disallow(address);
  });
});
