// Bans over HTTP: refused before the key is looked up, not counted against any limit, kept
// across a restart, shared by every instance, lifted by an operator; and X-Forwarded-For
// believed only as far as the operator trusts it.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanOperations } from '../../src/admin/bans.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { banSubject, parseIp } from '../../src/domain/address.js';
import { keys } from '../../src/store/keys.js';
import { CURL_UA, freshIPv4, freshIPv6, PLATFORM, via, waitFor } from '../support/gate.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

const ENFORCE = { GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' };

describe('platform-only access: bans', () => {
  let redis: Redis;
  let bans: BanOperations;
  let ws: CreatedWorkspace;
  const running = new Set<RunningService>();
  const start = async (env: Record<string, string> = ENFORCE) => {
    const service = await startTestService(env);
    running.add(service);
    return service;
  };
  const stop = async (service: RunningService) => {
    running.delete(service);
    await service.close();
  };
  const ping = (service: RunningService, headers: Record<string, string>, key = ws.apiKey) =>
    call(service, 'GET', '/ping', { key, headers });

  before(async () => {
    redis = testRedis();
    bans = new BanOperations(redis);
    ws = await newWorkspace(redis, 'free', 'Ban Studio');
  });
  after(async () => {
    await Promise.all([...running].map((s) => s.close()));
    redis.disconnect();
  });

  it('refuses a banned address with 403 even with a valid key, before the key is looked up', async () => {
    const service = await start();
    const address = freshIPv4();
    await bans.addBan({ address, reason: 'seen scraping' });
    expect(await waitFor(async () => (await ping(service, via(address, PLATFORM))).status === 403)).to.equal(true);
    const res = await ping(service, via(address, PLATFORM));
    expect(res.body).to.deep.equal({ success: false, error: res.body.error, code: 'FORBIDDEN' });
    expect(res.body.error).to.include(`${address} is banned`);
    // A key that does not exist would be 401 if it were looked up: the ban answers first.
    const unknownKey = await ping(service, via(address, PLATFORM), 'pds_' + 'Z'.repeat(40));
    expect(unknownKey.status).to.equal(403);
    // Every path, not only the API's routes.
    const elsewhere = await call(service, 'GET', '/../../nowhere', { headers: via(address, PLATFORM) });
    expect(elsewhere.status).to.equal(403);
    expect(service.gate.counters.refusals.banned).to.be.greaterThanOrEqual(3);
  });

  it("does not count a banned address's requests against the workspace's limit", async () => {
    const service = await start();
    const good = freshIPv4();
    const bad = freshIPv4();
    const first = await ping(service, via(good, PLATFORM));
    expect(first.status).to.equal(200);
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    // The first violation bans (the ban answers before the limiter), then five more refusals.
    expect((await ping(service, via(bad, { 'user-agent': CURL_UA }))).status).to.equal(403);
    for (let i = 0; i < 5; i++) expect((await ping(service, via(bad, PLATFORM))).status).to.equal(403);
    const after = await ping(service, via(good, PLATFORM));
    expect(after.status).to.equal(200);
    expect(Number(after.headers.get('x-ratelimit-remaining'))).to.equal(remaining - 1);
  });

  it('reaches a second instance at once, survives a restart, and is lifted everywhere by an operator', async () => {
    const a = await start();
    const b = await start();
    const address = freshIPv6();
    expect((await ping(b, via(address, PLATFORM))).status).to.equal(200);

    // A violation seen by instance A bans the address on B too, through pub/sub.
    expect((await ping(a, via(address, { 'user-agent': CURL_UA }))).status).to.equal(403);
    expect(await waitFor(async () => (await ping(b, via(address, PLATFORM))).status === 403)).to.equal(true);

    // A restart loads the ban from Redis.
    await stop(a);
    const c = await start();
    expect((await ping(c, via(address, PLATFORM))).status).to.equal(403);
    // IPv6: the ban covers the address's /64.
    const subject = banSubject(parseIp(address)!);
    expect(subject).to.match(/\/64$/);
    expect(c.gate.bans.isBanned(subject)).to.equal(true);

    // Lifted by an operator (naming the address or its /64): every instance lets it in again.
    const lifted = await bans.removeBan(address);
    expect(lifted.address).to.equal(subject);
    for (const service of [b, c]) {
      expect(await waitFor(async () => (await ping(service, via(address, PLATFORM))).status === 200)).to.equal(true);
    }
  });

  it('picks up a ban written without an event at the next full reload (the staleness bound)', async () => {
    const service = await start({ ...ENFORCE, GATE_BAN_RELOAD_MS: '1000' });
    const address = freshIPv4();
    // Written straight into Redis with no event, as if the event had been lost.
    await redis.hset(keys.bans(), address, JSON.stringify({ address, bannedAt: new Date().toISOString(), source: 'operator', reasons: ['test'] }));
    expect(service.gate.bans.isBanned(address)).to.equal(false);
    expect(await waitFor(async () => service.gate.bans.isBanned(address), 3000)).to.equal(true);
    expect((await ping(service, via(address, PLATFORM))).status).to.equal(403);
    await bans.removeBan(address);
  });

  describe('X-Forwarded-For', () => {
    it('is ignored without TRUST_PROXY_HOPS: a forged entry neither bans its victim nor escapes a ban', async () => {
      const service = await start({ GATE_MODE: 'enforce', GATE_ALLOWED_CIDRS: '127.0.0.0/8,::1/128' });
      const victim = freshIPv4();
      // The caller (127.0.0.1) forges a victim's address on a violating request.
      const res = await ping(service, via(victim, { 'user-agent': CURL_UA, 'roblox-id': '1' }));
      expect(res.status).to.equal(403);
      expect((await bans.listBans()).map((b) => b.address)).not.to.include(victim);
      // A platform request with a forged, allowed-looking address is judged by its socket.
      expect((await ping(service, via('128.116.0.1', PLATFORM))).status).to.equal(200);
    });

    it('with TRUST_PROXY_HOPS=1, only the entry our proxy appended counts', async () => {
      const service = await start({ ...ENFORCE, GATE_ALLOWED_CIDRS: '128.116.0.0/17' });
      const real = freshIPv4();
      // The caller wrote a platform address; the proxy appended the real one.
      const res = await ping(service, via(`128.116.0.9, ${real}`, PLATFORM));
      expect(res.status).to.equal(403);
      expect((await bans.getBan(real)).reasons).to.deep.equal(['address']);
      expect((await bans.listBans()).map((b) => b.address)).not.to.include('128.116.0.9');
    });

    it('with TRUSTED_PROXY_CIDRS, only entries written by the listed proxies count', async () => {
      const service = await start({ GATE_MODE: 'enforce', TRUSTED_PROXY_CIDRS: '127.0.0.0/8', GATE_ALLOWED_CIDRS: '128.116.0.0/17' });
      expect((await ping(service, via('128.116.0.10', PLATFORM))).status).to.equal(200);
      const real = freshIPv4();
      expect((await ping(service, via(`128.116.0.11, ${real}`, PLATFORM))).status).to.equal(403);
      expect(await bans.getBan(real)).to.have.property('source', 'gate');
    });
  });
});
