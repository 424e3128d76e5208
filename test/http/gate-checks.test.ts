// Platform-only access over HTTP: each mode, each check, IPv4 and IPv6 ranges, and the
// editor's play-tests. Addresses other than the loopback one arrive through X-Forwarded-For
// with TRUST_PROXY_HOPS=1, as from the operator's own proxy.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanOperations } from '../../src/admin/bans.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { banSubject, parseIp } from '../../src/domain/address.js';
import { CURL_UA, EDITOR_UA, freshIPv4, freshIPv6, PLATFORM, via, waitFor } from '../support/gate.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

describe('platform-only access: modes and checks', () => {
  let redis: Redis;
  let bans: BanOperations;
  let ws: CreatedWorkspace;
  const started: RunningService[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startTestService(env);
    started.push(service);
    return service;
  };
  /** `null`: no key at all. */
  const ping = (service: RunningService, headers: Record<string, string>, key: string | null = ws.apiKey) =>
    call(service, 'GET', '/ping', { key: key ?? undefined, headers });
  const isBanned = async (address: string) => (await bans.listBans()).some((b) => b.address === address);

  before(async () => {
    redis = testRedis();
    bans = new BanOperations(redis);
    ws = await newWorkspace(redis, 'pro', 'Gate Studio');
  });
  after(async () => {
    await Promise.all(started.map((s) => s.close()));
    redis.disconnect();
  });

  describe('GATE_MODE=off (the default)', () => {
    it("lets any caller through with no check; an operator's ban still applies (test/http/gate-off-bans.test.ts)", async () => {
      const service = await start({ TRUST_PROXY_HOPS: '1' });
      const res = await ping(service, { 'user-agent': CURL_UA });
      expect(res.status).to.equal(200);
      expect(service.gate.counters.violations['user-agent']).to.equal(0);
      const address = freshIPv4();
      await bans.addBan({ address });
      try {
        expect(await waitFor(async () => (await ping(service, via(address, PLATFORM))).status === 403)).to.equal(true);
        expect(service.gate.bans.isBanned(address)).to.equal(true);
      } finally {
        await bans.removeBan(address);
      }
    });
  });

  describe('GATE_MODE=report', () => {
    let service: RunningService;
    before(async () => {
      service = await start({ GATE_MODE: 'report', TRUST_PROXY_HOPS: '1', GATE_ALLOWED_CIDRS: '128.116.0.0/17' });
    });

    it('lets a violation through, counts it, records it with its evidence, and bans nobody', async () => {
      const address = freshIPv4();
      const res = await ping(service, via(address, { 'user-agent': CURL_UA }));
      expect(res.status).to.equal(200);
      const counters = service.gate.counters;
      expect(counters.violations['user-agent']).to.be.greaterThan(0);
      expect(counters.violations['roblox-id']).to.be.greaterThan(0);
      expect(counters.violations.address).to.be.greaterThan(0);
      expect(counters.bansCreated).to.equal(0);
      let recorded: Awaited<ReturnType<BanOperations['violations']>> = [];
      for (let i = 0; i < 40 && recorded.length === 0; i++) {
        recorded = await bans.violations({ address });
        if (recorded.length === 0) await new Promise((r) => setTimeout(r, 25));
      }
      expect(recorded).to.have.length(1);
      expect(recorded[0]).to.deep.include({ address, outcome: 'reported', mode: 'report' });
      expect(recorded[0]!.reasons).to.deep.equal(['user-agent', 'roblox-id', 'address']);
      expect(recorded[0]!.evidence).to.deep.include({ method: 'GET', path: '/api/v1/ping', userAgent: CURL_UA, workspaceId: ws.workspaceId });
      expect(recorded[0]!.evidence.headerNames).to.include('x-api-key');
      expect(JSON.stringify(recorded[0])).not.to.include(ws.apiKey);
      expect(await isBanned(address)).to.equal(false);
    });

    it("still refuses addresses an operator banned: report mode only makes no new bans", async () => {
      const address = freshIPv4();
      await bans.addBan({ address, reason: 'by hand' });
      try {
        expect(await waitFor(async () => (await ping(service, via(address, PLATFORM))).status === 403)).to.equal(true);
      } finally {
        await bans.removeBan(address);
      }
    });

    it('lets a platform request from an allowed range through without recording anything', async () => {
      const before = service.gate.counters.violations;
      const res = await ping(service, via('128.116.77.1', PLATFORM));
      expect(res.status).to.equal(200);
      expect(service.gate.counters.violations).to.deep.equal(before);
    });

    it('lets an editor play-test with a production key through, recorded', async () => {
      const address = freshIPv4();
      const res = await ping(service, via(address, { 'user-agent': EDITOR_UA }));
      expect(res.status).to.equal(200);
      expect(service.gate.counters.violations['editor-production-key']).to.be.greaterThan(0);
      expect(await isBanned(address)).to.equal(false);
    });
  });

  describe('GATE_MODE=enforce', () => {
    let service: RunningService;
    /** Header checks only. */
    let unranged: RunningService;
    let ranged: RunningService;
    before(async () => {
      service = ranged = await start({
        GATE_MODE: 'enforce',
        TRUST_PROXY_HOPS: '1',
        GATE_ALLOWED_CIDRS: '128.116.0.0/17,2001:db8:aaaa::/48',
      });
      unranged = await start({ GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' });
    });

    it('lets platform requests from the allowed IPv4 and IPv6 ranges through', async () => {
      for (const address of ['128.116.1.2', '128.116.127.254', '2001:db8:aaaa::5', '2001:db8:aaaa:ffff::1']) {
        const res = await ping(service, via(address, PLATFORM));
        expect(res.status, address).to.equal(200);
      }
    });

    const cases: [string, () => string, Record<string, string>, string[]][] = [
      ['a foreign User-Agent', freshIPv4, { 'user-agent': CURL_UA, 'roblox-id': '1818' }, ['user-agent']],
      ['no User-Agent at all', freshIPv4, { 'roblox-id': '1818' }, ['user-agent']],
      ['a missing Roblox-Id', () => freshIPv6(), { 'user-agent': 'Roblox/Linux' }, ['roblox-id']],
      ['an IPv4 address outside the ranges', freshIPv4, PLATFORM, ['address']],
      ['an IPv6 address outside the ranges', () => freshIPv6('2001:db8:bbbb'), PLATFORM, ['address']],
    ];
    for (const [what, addressOf, headers, reasons] of cases) {
      it(`bans the address for ${what}, with the reason and the evidence`, async () => {
        const address = addressOf();
        const service = reasons[0] === 'address' ? ranged : unranged;
        const first = await ping(service, via(address, headers));
        expect(first.status).to.equal(403);
        expect(first.body.success).to.equal(false);
        // An IPv6 address is banned with its /64.
        const subject = banSubject(parseIp(address)!);
        expect(first.body.error).to.include(`${subject} is banned`);
        const record = await bans.getBan(address);
        expect(record).to.deep.include({ address: subject, source: 'gate' });
        expect(record.reasons).to.deep.equal(reasons);
        expect(record.evidence).to.deep.include({ path: '/api/v1/ping', workspaceId: ws.workspaceId, keyId: ws.keyId });
        // Even a perfect platform request from it is refused now.
        const again = await ping(service, via(address, PLATFORM));
        expect(again.status).to.equal(403);
        await bans.removeBan(address);
      });
    }

    it('refuses a header violation from inside the platform ranges, but never bans a shared platform address', async () => {
      const address = '128.116.33.' + (1 + (Date.now() % 250));
      const res = await ping(ranged, via(address, { 'user-agent': 'RobloxNext/2.0', 'roblox-id': '1818' }));
      expect(res.status).to.equal(403);
      expect(res.body.error).to.match(/User-Agent/);
      expect(await isBanned(address)).to.equal(false);
      expect((await ping(ranged, via(address, PLATFORM))).status).to.equal(200);
    });

    it('refuses an editor play-test with a production key without banning, and says what to do', async () => {
      const address = freshIPv4();
      const res = await ping(service, via(address, { 'user-agent': EDITOR_UA }));
      expect(res.status).to.equal(403);
      expect(res.body.error).to.match(/development API key/);
      expect(await isBanned(address)).to.equal(false);
      expect(service.gate.counters.refusals['editor-production-key']).to.be.greaterThan(0);
    });

    it('lets an editor play-test with a development key through, still authenticated and rate-limited', async () => {
      const devWs = await newWorkspace(redis, 'free', 'Dev Studio');
      await bans.setKeyDev(devWs.keyId, true);
      const address = freshIPv4();
      const lookups = () => service.authenticator.stats.hits + service.authenticator.stats.misses;
      const before = lookups();
      const res = await ping(service, via(address, { 'user-agent': EDITOR_UA }), devWs.apiKey);
      expect(res.status).to.equal(200);
      expect(res.body.workspaceId).to.equal(devWs.workspaceId);
      // One key lookup for the request: the gate's, whose principal authentication takes over.
      expect(lookups() - before).to.equal(1);
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('59');
      // Without a key: the same 403 as a production or unknown key (the editor path tells none apart).
      const noKey = await ping(service, via(address, { 'user-agent': EDITOR_UA }), null);
      expect(noKey.status).to.equal(403);
      expect(noKey.body.error).to.match(/must use a development API key/);
      // Back to production: refused again as soon as the key event reaches the cache.
      await bans.setKeyDev(devWs.keyId, false);
      expect(await waitFor(async () => (await ping(service, via(address, { 'user-agent': EDITOR_UA }), devWs.apiKey)).status === 403)).to.equal(true);
      expect(await isBanned(address)).to.equal(false);
    });

    it('never bans an allow-listed address, and lets it through', async () => {
      const address = freshIPv4();
      await bans.allow({ entry: `${address}/32`, note: 'our monitoring' });
      try {
        // Even before the allow-list event arrives, the ban path checks Redis and lets it in.
        const res = await ping(service, via(address, { 'user-agent': CURL_UA }));
        expect(res.status).to.equal(200);
        expect(await isBanned(address)).to.equal(false);
        expect(await waitFor(async () => service.gate.bans.isAllowListed(parseIp(address)!))).to.equal(true);
        expect((await ping(service, via(address, { 'user-agent': CURL_UA }))).status).to.equal(200);
        expect(await isBanned(address)).to.equal(false);
      } finally {
        await bans.disallow(address);
      }
    });

    it('refuses without a ban when the client address cannot be determined (no X-Forwarded-For)', async () => {
      const res = await ping(service, { 'user-agent': CURL_UA });
      expect(res.status).to.equal(403);
      expect(res.body.error).to.match(/only be called from the game platform's servers/);
      expect((await bans.listBans()).some((b) => b.address === '127.0.0.1')).to.equal(false);
    });
  });

  describe('GATE_ALLOWED_CIDRS against the socket address (no proxy)', () => {
    it('IPv4: 127.0.0.1 passes when its range is allowed, and is refused (never banned: loopback) when not', async () => {
      const inside = await start({ GATE_MODE: 'enforce', GATE_ALLOWED_CIDRS: '127.0.0.0/8' });
      expect((await ping(inside, PLATFORM)).status).to.equal(200);
      const outside = await start({ GATE_MODE: 'enforce', GATE_ALLOWED_CIDRS: '10.0.0.0/8' });
      const res = await ping(outside, PLATFORM);
      expect(res.status).to.equal(403);
      expect(await isBanned('127.0.0.1')).to.equal(false);
      expect(outside.gate.counters.refusedNotBanned).to.equal(1);
    });

    it('IPv6: ::1 passes when its range is allowed, and is refused when not', async () => {
      const inside = await start({ HOST: '::1', GATE_MODE: 'enforce', GATE_ALLOWED_CIDRS: '::1/128' });
      expect(inside.baseUrl).to.include('[::1]');
      expect((await ping(inside, PLATFORM)).status).to.equal(200);
      const outside = await start({ HOST: '::1', GATE_MODE: 'enforce', GATE_ALLOWED_CIDRS: '2001:db8::/32,127.0.0.0/8' });
      expect((await ping(outside, PLATFORM)).status).to.equal(403);
      expect(await isBanned('::1')).to.equal(false);
    });

    it('with the address check off (no ranges) and Roblox-Id check off, only the User-Agent counts', async () => {
      const service = await start({ GATE_MODE: 'enforce', GATE_CHECK_ROBLOX_ID: 'off' });
      expect((await ping(service, { 'user-agent': 'Roblox/Linux' })).status).to.equal(200);
      expect((await ping(service, { 'user-agent': CURL_UA, 'roblox-id': '1' })).status).to.equal(403);
    });

    it('with the User-Agent check off, a foreign User-Agent passes', async () => {
      const service = await start({ GATE_MODE: 'enforce', GATE_CHECK_USER_AGENT: 'off' });
      expect((await ping(service, { 'user-agent': CURL_UA, 'roblox-id': '1' })).status).to.equal(200);
      expect((await ping(service, { 'user-agent': CURL_UA })).status).to.equal(403);
    });
  });
});
