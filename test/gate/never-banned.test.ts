// In enforce mode a violation from a public address bans it; one from an address of the
// operator's own networks (private, carrier-grade NAT, unique-local, link-local, loopback,
// unspecified) is refused but never banned: such an address is a proxy or host in front of
// every caller, and banning it would lock them all out. Tried over HTTP, the address arriving
// through X-Forwarded-For from a trusted proxy, for each range and both ends of it.
import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanOperations } from '../../src/admin/bans.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { banSubject, parseIp } from '../../src/domain/address.js';
import type { RunningService } from '../../src/server.js';
import { CURL_UA, via } from '../support/gate.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

/** What a ban of `address` is stored under (an IPv6 address: its /64). */
const subjectOf = (address: string) => banSubject(parseIp(address)!);
const r = (max: number) => randomInt(0, max + 1);
const hex = () => randomInt(0, 0x10000).toString(16);

/** Addresses that must never be banned, by range; each list has the range's first and last address and one inside. */
const NEVER_BANNED: Record<string, string[]> = {
  'private 10/8': ['10.0.0.0', '10.255.255.255', `10.${r(255)}.${r(255)}.${r(254) + 1}`],
  'private 172.16/12': ['172.16.0.1', '172.31.255.255', `172.${16 + r(15)}.${r(255)}.${r(254) + 1}`],
  'private 192.168/16': ['192.168.0.1', '192.168.255.255', `192.168.${r(255)}.${r(254) + 1}`],
  'carrier-grade NAT 100.64/10': ['100.64.0.1', '100.127.255.255', `100.${64 + r(63)}.${r(255)}.${r(254) + 1}`],
  'link-local 169.254/16': ['169.254.0.1', '169.254.255.255', `169.254.${r(255)}.${r(254) + 1}`],
  'unique-local fc00::/7': ['fc00::1', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', `fd${r(255).toString(16).padStart(2, '0')}:${hex()}::${hex()}`],
  'link-local fe80::/10': ['fe80::1', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', `fe80::${hex()}:${hex()}`],
  'IPv4-mapped private': [`::ffff:10.${r(255)}.${r(255)}.${r(254) + 1}`, `::ffff:192.168.${r(255)}.1`],
  loopback: ['127.0.0.2', '::1'],
  unspecified: ['0.0.0.0', '::'],
};

/** Just outside those ranges: public addresses, banned like any other. */
const BANNABLE = ['172.32.0.1', '100.128.0.1', '11.0.0.1', '169.255.0.1', 'fe00::1', 'fec0::1'];

describe('gate: addresses of the operator’s own networks are never banned', () => {
  let redis: Redis;
  let bans: BanOperations;
  let ws: CreatedWorkspace;
  let service: RunningService;
  const banned = async () => new Set((await bans.listBans()).map((b) => b.address));

  before(async () => {
    redis = testRedis();
    bans = new BanOperations(redis);
    ws = await newWorkspace(redis, 'pro', 'Never Banned');
    service = await startTestService({ GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' });
  });
  after(async () => {
    // Bans live in the shared test Redis: lift any this file made, so no other test meets them.
    const mine = new Set([...Object.values(NEVER_BANNED).flat(), ...BANNABLE].map(subjectOf));
    for (const ban of await bans.listBans()) if (mine.has(ban.address)) await bans.removeBan(ban.address);
    await service.close();
    redis.disconnect();
  });

  const violate = (address: string) => call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(address, { 'user-agent': CURL_UA }) });

  for (const [range, addresses] of Object.entries(NEVER_BANNED)) {
    it(`${range}: refused, not banned`, async () => {
      const before = { ...service.gate.counters };
      for (const address of addresses) {
        const res = await violate(address);
        expect(res.status, address).to.equal(403);
        expect(res.body.code, address).to.equal('FORBIDDEN');
      }
      expect(service.gate.counters.refusedNotBanned - before.refusedNotBanned).to.equal(addresses.length);
      expect(service.gate.counters.bansCreated - before.bansCreated).to.equal(0);
      const now = await banned();
      for (const address of addresses) expect(now.has(subjectOf(address)), address).to.equal(false);
    });
  }

  it('the neighbours just outside those ranges are banned on their first violation', async () => {
    const before = service.gate.counters.bansCreated;
    for (const address of BANNABLE) expect((await violate(address)).status, address).to.equal(403);
    expect(service.gate.counters.bansCreated - before).to.equal(BANNABLE.length);
    const now = await banned();
    for (const address of BANNABLE) expect(now.has(subjectOf(address)), address).to.equal(true);
  });
});
