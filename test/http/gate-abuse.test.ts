// Bans that cannot be abused (issue 17, finding 3): automatic bans rate-limited on every
// instance together, IPv6 violators banned by their /64, evidence bounded, violation log
// lines sampled, the ban list paged; and the warning when proxy trust meets an open listener
// (finding 4).
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanOperations } from '../../src/admin/bans.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { banSubject, parseIp } from '../../src/domain/address.js';
import { keys } from '../../src/store/keys.js';
import { CURL_UA, freshIPv4, freshIPv6, PLATFORM, via, waitFor } from '../support/gate.js';
import { LogCapture } from '../support/log-capture.js';
import { call, newWorkspace, startTestService, testConfig, testRedis } from '../support/service.js';

const ENFORCE = { GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' };

/** Waits out the last seconds of a minute, so a test's burst falls in one ban-rate window. */
async function awayFromMinuteEdge(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 55_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
}

describe('platform-only access: bans that cannot be abused', () => {
  let redis: Redis;
  let bans: BanOperations;
  let ws: CreatedWorkspace;
  const running = new Set<RunningService>();
  const start = async (env: Record<string, string> = ENFORCE, logs?: LogCapture) => {
    const config = testConfig(logs ? { LOG_LEVEL: 'info', ...env } : env);
    const service = logs ? await startService(config, createLogger(config, logs)) : await startTestService(env);
    running.add(service);
    return service;
  };
  const ping = (service: RunningService, headers: Record<string, string>, key = ws.apiKey) =>
    call(service, 'GET', '/ping', { key, headers });

  before(async () => {
    redis = testRedis();
    bans = new BanOperations(redis);
    ws = await newWorkspace(redis, 'pro', 'Abuse Studio');
  });
  after(async () => {
    await Promise.all([...running].map((s) => s.close()));
    redis.disconnect();
  });

  it('bans at most GATE_BAN_MAX_PER_MINUTE subjects a minute; beyond, violations are refused and counted, not banned', async function () {
    this.timeout(90_000);
    await awayFromMinuteEdge();
    // Two instances share the minute's budget through Redis.
    const a = await start({ ...ENFORCE, GATE_BAN_MAX_PER_MINUTE: '3' });
    const b = await start({ ...ENFORCE, GATE_BAN_MAX_PER_MINUTE: '3' });
    const addresses = Array.from({ length: 8 }, () => freshIPv4());
    for (const [i, address] of addresses.entries()) {
      const res = await ping(i % 2 === 0 ? a : b, via(address, { 'user-agent': CURL_UA }));
      expect(res.status).to.equal(403);
      expect(res.body.code).to.equal('FORBIDDEN');
    }
    const banned: string[] = [];
    for (const address of addresses) if (await bans.getBan(address).then(() => true, () => false)) banned.push(address);
    // Other tests may have used some of this minute's budget already: never more than 3.
    expect(banned.length).to.be.at.most(3);
    const made = a.gate.counters.bansCreated + b.gate.counters.bansCreated;
    const limited = a.gate.counters.bansRateLimited + b.gate.counters.bansRateLimited;
    expect(made).to.equal(banned.length);
    expect(made + limited).to.equal(8);
    expect(limited).to.be.at.least(5);
    // A refused, unbanned address is not locked out: its platform requests pass.
    const spared = addresses.find((x) => !banned.includes(x))!;
    expect((await ping(a, via(spared, PLATFORM))).status).to.equal(200);
    for (const address of banned) await bans.removeBan(address);
  });

  it("shares the minute's automatic bans between networks: one /24 or /48 takes at most a quarter of them", async function () {
    this.timeout(90_000);
    await awayFromMinuteEdge();
    const service = await start({ ...ENFORCE, GATE_BAN_MAX_PER_MINUTE: '100' });
    const violate = async (address: string) => expect((await ping(service, via(address, { 'user-agent': CURL_UA }))).status).to.equal(403);
    const isBanned = async (address: string) => (await redis.hexists(keys.bans(), banSubject(parseIp(address)!))) === 1;
    const oneSlash24 = Array.from({ length: 30 }, (_, i) => `192.0.2.${i + 10}`);
    const slash48 = `2001:db8:${randomBytes(2).toString('hex')}`;
    const oneSlash48 = Array.from({ length: 30 }, () => freshIPv6(slash48));
    for (const address of [...oneSlash24, ...oneSlash48]) await violate(address);
    const bannedOf = async (addresses: string[]) => (await Promise.all(addresses.map(isBanned))).filter(Boolean).length;
    // A quarter of GATE_BAN_MAX_PER_MINUTE (100) each; the rest refused and counted, not banned.
    expect(await bannedOf(oneSlash24), '192.0.2.0/24').to.equal(25);
    expect(await bannedOf(oneSlash48), 'one /48').to.equal(25);
    expect(service.gate.counters.bansRateLimited).to.equal(10);
    // Other networks still get their bans in the same minute.
    const elsewhere = freshIPv4();
    await violate(elsewhere);
    expect(await isBanned(elsewhere)).to.equal(true);
    for (const address of [...oneSlash24, ...oneSlash48, elsewhere]) if (await isBanned(address)) await bans.removeBan(address);
  });

  it('bans an IPv6 violator by its /64: one record however many of its addresses are used, and any of them is refused', async () => {
    await awayFromMinuteEdge();
    const service = await start({ ...ENFORCE, GATE_BAN_MAX_PER_MINUTE: '1000' });
    const first = freshIPv6();
    const subject = banSubject(parseIp(first)!);
    const prefix = subject.slice(0, subject.indexOf('::/64'));
    const sameSlash64 = (i: number) => `${prefix}:${(i + 1).toString(16)}:${(i * 7 + 3).toString(16)}:1:${(i + 9).toString(16)}`;
    for (let i = 0; i < 20; i++) {
      const res = await ping(service, via(sameSlash64(i), { 'user-agent': CURL_UA }));
      expect(res.status).to.equal(403);
    }
    const records = (await redis.hkeys(keys.bans())).filter((k) => k.startsWith(`${prefix}:`) || k.startsWith(`${prefix}::`));
    expect(records).to.deep.equal([subject]);
    expect(service.gate.counters.bansCreated).to.equal(1);
    // Another address of the /64, with the platform's headers: banned too.
    const res = await ping(service, via(`${prefix}:ffff:1:2:3`, PLATFORM));
    expect(res.status).to.equal(403);
    expect(res.body.error).to.include(`${subject} is banned`);
    // The neighbouring /64 is not.
    const [, , , fourth] = subject.split(':');
    const neighbour = `${subject.split(':').slice(0, 3).join(':')}:${((parseInt(fourth || '0', 16) + 1) % 0x10000).toString(16)}::1`;
    expect((await ping(service, via(neighbour, PLATFORM))).status).to.equal(200);
    await bans.removeBan(first);
  });

  it('caps the evidence of a ban: header names cut to 40 characters and counted, the record under 4 KiB', async () => {
    await awayFromMinuteEdge();
    const service = await start({ ...ENFORCE, GATE_BAN_MAX_PER_MINUTE: '1000' });
    const address = freshIPv4();
    const headers: Record<string, string> = { 'user-agent': 'x'.repeat(900), 'roblox-id': 'y'.repeat(900), origin: 'o'.repeat(900) };
    for (let i = 0; i < 48; i++) headers[`x-long-header-name-${i}-${'n'.repeat(150)}`] = 'v';
    expect((await call(service, 'GET', `/ping/${'p'.repeat(900)}`, { key: ws.apiKey, headers: via(address, headers) })).status).to.equal(403);
    const raw = await redis.hget(keys.bans(), address);
    expect(raw).to.be.a('string');
    expect(Buffer.byteLength(raw!)).to.be.at.most(4096);
    const record = JSON.parse(raw!);
    expect(record.evidence.headerNames.length).to.be.at.most(32);
    for (const name of record.evidence.headerNames) expect(name.length).to.be.at.most(40);
    expect(record.evidence.headerCount).to.be.at.least(51);
    expect(record.evidence.headerNamesCut).to.be.greaterThan(0);
    await bans.removeBan(address);
  });

  it('logs at most GATE_VIOLATION_LOG_PER_MINUTE violation lines a minute on an instance', async () => {
    const logs = new LogCapture();
    const service = await start({ GATE_MODE: 'report', GATE_VIOLATION_LOG_PER_MINUTE: '3' }, logs);
    for (let i = 0; i < 10; i++) {
      // Report mode: each new address's violation would be written once a minute.
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey, headers: { 'user-agent': `${CURL_UA}-${i}` } })).status).to.equal(200);
    }
    // Loopback is one address: use distinct ones through a trusting instance.
    const trusting = await start({ GATE_MODE: 'report', TRUST_PROXY_HOPS: '1', GATE_VIOLATION_LOG_PER_MINUTE: '3' }, logs);
    for (let i = 0; i < 10; i++) expect((await ping(trusting, via(freshIPv4(), { 'user-agent': CURL_UA }))).status).to.equal(200);
    const violationLines = () => logs.lines.filter((l) => l.includes('platform-only access violation')).length;
    expect(await waitFor(async () => violationLines() >= 4)).to.equal(true);
    await new Promise((r) => setTimeout(r, 200));
    // One line from the first instance (one address), three from the second: 4, not 11.
    expect(violationLines()).to.equal(4);
  });

  it('pages the ban list in address order with a cursor (BanOperations.pageBans, behind the admin API and the CLI)', async () => {
    const mine = Array.from({ length: 5 }, () => freshIPv4());
    for (const address of mine) await bans.addBan({ address, reason: 'paging test' });
    const sorted = [...mine].sort();
    const seen: string[] = [];
    let after: string | undefined = sorted[0]!.slice(0, -1);
    let pages = 0;
    while (after !== undefined && seen.length < 200) {
      const page = await bans.pageBans({ limit: 2, after });
      expect(page.bans.length).to.be.at.most(2);
      seen.push(...page.bans.map((b) => b.address));
      after = page.next ?? undefined;
      pages++;
      if (sorted.every((x) => seen.includes(x))) break;
    }
    expect(pages).to.be.at.least(3);
    expect(seen).to.deep.equal([...seen].sort());
    expect(new Set(seen).size).to.equal(seen.length);
    expect(sorted.every((x) => seen.includes(x))).to.equal(true);
    for (const address of mine) await bans.removeBan(address);
  });

  describe('proxy trust and an open listener (finding 4)', () => {
    it('warns at start when HOST is every interface and X-Forwarded-For is trusted', async () => {
      const logs = new LogCapture();
      await start({ HOST: '0.0.0.0', TRUST_PROXY_HOPS: '1', LOG_LEVEL: 'warn' }, logs);
      expect(logs.text).to.match(/bound to all interfaces with proxy trust on/);
      const quiet = new LogCapture();
      await start({ HOST: '127.0.0.1', TRUST_PROXY_HOPS: '1', LOG_LEVEL: 'warn' }, quiet);
      await start({ HOST: '0.0.0.0', LOG_LEVEL: 'warn' }, quiet);
      expect(quiet.text).not.to.match(/proxy trust/);
    });
  });
});
