// Issue 17's findings 3-5 driven as an attacker would, against one in-process service on
// loopback only, each phase bounded in time. Prints what each attack got: bans made, ban hash
// bytes, log bytes, answers seen. (The normal run's tests of each fix are in
// test/http/gate-abuse.test.ts and test/security/abuse-findings.test.ts.)
import { connect } from 'node:net';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService, type RunningService } from '../src/server.js';
import { keys } from '../src/store/keys.js';
import { ADMIN_TOKEN } from '../test/support/admin.js';
import { CURL_UA, EDITOR_UA } from '../test/support/gate.js';
import { LogCapture } from '../test/support/log-capture.js';
import { newWorkspace, testConfig, testRedis } from '../test/support/service.js';
import { report } from './report.js';

const PHASE_MS = 15_000;
const IN_FLIGHT = 16;

/** Runs `count` requests, `IN_FLIGHT` at a time, stopping early at the phase's deadline; counts statuses. */
async function flood(count: number, send: (i: number) => Promise<number>): Promise<{ sent: number; statuses: Record<string, number>; ms: number }> {
  const started = Date.now();
  const statuses: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < count && Date.now() - started < PHASE_MS) {
      const i = next++;
      const status = await send(i).catch(() => 0);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return { sent: next, statuses, ms: Date.now() - started };
}

function madeUpKey(i: number): string {
  return `pds_${String(i).padStart(8, '0')}${'Q'.repeat(32)}`;
}

async function banHash(redis: Redis): Promise<{ records: number; bytes: number }> {
  const all = await redis.hgetall(keys.bans());
  let bytes = 0;
  for (const [field, value] of Object.entries(all)) bytes += Buffer.byteLength(field) + Buffer.byteLength(value);
  return { records: Object.keys(all).length, bytes };
}

function silentFor(port: number, limitMs: number): Promise<number> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => socket.destroy(), limitMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
    socket.on('error', () => undefined);
  });
}

describe('abuse run: issue 17 findings 3-5, as an attacker', function () {
  this.timeout(300_000);
  let redis: Redis;
  let service: RunningService;
  const logs = new LogCapture();
  let apiKey: string;

  before(async () => {
    redis = testRedis();
    apiKey = (await newWorkspace(redis, 'pro', 'Abuse run')).apiKey;
    const config = testConfig({
      GATE_MODE: 'enforce',
      TRUST_PROXY_HOPS: '1',
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      RATE_LIMIT_PRO: '1000000000',
      // The service's own default, not the tests' out-of-reach budget (see testConfig).
      AUTH_FAILURES_PER_MINUTE: String(loadConfig({}).authFailuresPerMinute),
      GATE_BAN_MAX_PER_MINUTE: String(loadConfig({}).gate.banMaxPerMinute),
    });
    service = await startService(config, createLogger(config, logs));
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  const logBytes = () => Buffer.byteLength(logs.text);
  const warnBytes = () => logs.lines.filter((l) => l.includes('"level":40')).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);

  it('finding 3: bans stay bounded under floods of IPv6 and IPv4 violators', async () => {
    const longNames: Record<string, string> = {};
    for (let i = 0; i < 48; i++) longNames[`x-${'h'.repeat(200)}-${i}`] = '1';
    const hashBefore = await banHash(redis);
    const warnBefore = warnBytes();

    // 500 addresses of one /64, each with 48 long header names (issue 17's run: 504 bans, 7.2 MB).
    const slash64 = await flood(500, async (i) => {
      const res = await fetch(`${service.baseUrl}/ping`, {
        headers: { 'x-forwarded-for': `2001:db8:a0:17:${(i + 1).toString(16)}:0:0:1`, 'user-agent': CURL_UA, 'x-api-key': apiKey, ...longNames },
      });
      await res.arrayBuffer();
      return res.status;
    });
    const afterSlash64 = await banHash(redis);

    // 500 distinct IPv4 addresses and 500 distinct IPv6 /64s: the per-minute cap holds.
    const ipv4 = await flood(500, async (i) => {
      const res = await fetch(`${service.baseUrl}/ping`, {
        headers: { 'x-forwarded-for': `198.18.${i >> 8}.${(i & 0xff) + 1}`, 'user-agent': CURL_UA, 'x-api-key': apiKey, ...longNames },
      });
      await res.arrayBuffer();
      return res.status;
    });
    const ipv6 = await flood(500, async (i) => {
      const res = await fetch(`${service.baseUrl}/ping`, {
        headers: { 'x-forwarded-for': `2001:db8:b0:${(i + 1).toString(16)}::1`, 'user-agent': CURL_UA, 'x-api-key': apiKey },
      });
      await res.arrayBuffer();
      return res.status;
    });
    const hashAfter = await banHash(redis);
    const page = await fetch(`${service.opsUrl}/admin/v1/bans`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const pageBytes = (await page.arrayBuffer()).byteLength;
    const counters = service.gate.counters;
    const figures = {
      slash64: { ...slash64, bansMade: afterSlash64.records - hashBefore.records },
      ipv4Addresses: ipv4,
      ipv6Slash64s: ipv6,
      bansMade: hashAfter.records - hashBefore.records,
      banHashBytes: hashAfter.bytes - hashBefore.bytes,
      bytesPerRecord: Math.round((hashAfter.bytes - hashBefore.bytes) / Math.max(1, hashAfter.records - hashBefore.records)),
      bansRateLimited: counters.bansRateLimited,
      warnLogBytes: warnBytes() - warnBefore,
      banListFirstPageBytes: pageBytes,
      banListPageStatus: page.status,
    };
    report('abuse-bans', figures);
    expect(afterSlash64.records - hashBefore.records).to.equal(1);
    expect(hashAfter.records - hashBefore.records).to.be.at.most(60); // 30 a minute; the run may span two minutes
    expect(figures.bytesPerRecord).to.be.below(4096);
    expect(figures.warnLogBytes).to.be.below(2 * 60 * 8192);
    expect(page.status).to.equal(200);
    for (const r of [slash64, ipv4, ipv6]) expect(Object.keys(r.statuses)).to.deep.equal(['403']);
  });

  it('finding 4: a forged X-Forwarded-For from a caller that is not a trusted proxy names nobody', async () => {
    // TRUSTED_PROXY_CIDRS that leave loopback out: the test client is then "a direct caller".
    const config = testConfig({ GATE_MODE: 'enforce', TRUSTED_PROXY_CIDRS: '10.0.0.0/8', LOG_LEVEL: 'silent' });
    const direct = await startService(config, createLogger(config));
    try {
      const victim = '192.0.2.10';
      const res = await fetch(`${direct.baseUrl}/ping`, { headers: { 'x-forwarded-for': victim, 'user-agent': CURL_UA, 'x-api-key': apiKey } });
      await res.arrayBuffer();
      const victimBanned = (await redis.hexists(keys.bans(), victim)) === 1;
      report('abuse-xff', { status: res.status, victimBanned });
      expect(victimBanned).to.equal(false);
    } finally {
      await direct.close();
    }
  });

  it('finding 5: the lower findings answer 4xx, cost no Redis past the budget, and leak nothing', async () => {
    const platform = { 'user-agent': 'Roblox/Linux', 'roblox-id': '1' };
    const post = (headers: Record<string, string>, body: string) =>
      fetch(`${service.baseUrl}/data/set`, {
        method: 'POST',
        headers: { 'x-forwarded-for': '203.0.113.50', 'content-type': 'application/json', 'x-api-key': apiKey, ...platform, ...headers },
        body,
      }).then(async (r) => (await r.arrayBuffer(), r.status));
    const encodings = await flood(300, (i) => post({ 'content-encoding': ['gzip', 'deflate', 'br', 'compress', 'x-zip'][i % 5]! }, 'not compressed'));

    const missesBefore = service.authenticator.stats.misses;
    const guesses = await flood(3000, async (i) => {
      const res = await fetch(`${service.baseUrl}/ping`, { headers: { 'x-forwarded-for': '203.0.113.51', 'x-api-key': madeUpKey(i), ...platform } });
      await res.arrayBuffer();
      return res.status;
    });
    const lookups = service.authenticator.stats.misses - missesBefore;
    const realKeyAfter = await fetch(`${service.baseUrl}/ping`, { headers: { 'x-forwarded-for': '203.0.113.52', 'x-api-key': apiKey, ...platform } });
    await realKeyAfter.arrayBuffer();

    const editor = async (key: string) => {
      const res = await fetch(`${service.baseUrl}/ping`, { headers: { 'x-forwarded-for': '203.0.113.53', 'x-api-key': key, 'user-agent': EDITOR_UA } });
      return `${res.status} ${await res.text()}`;
    };
    const editorSame = (await editor(apiKey)) === (await editor(madeUpKey(999_999)));

    const secret = 'Zz9'.repeat(13);
    const encodedPath = await fetch(`${service.baseUrl}/pds_%4D${secret}`, { headers: { 'x-forwarded-for': '203.0.113.54', 'x-api-key': apiKey, ...platform } });
    await encodedPath.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));

    const opsPort = Number(new URL(service.opsUrl).port);
    const silentMs = await silentFor(opsPort, 20_000);
    const publicDoc = (await (
      await fetch(`${service.baseUrl}/openapi.json`, { headers: { 'x-forwarded-for': '203.0.113.55', ...platform } })
    ).json()) as { paths: Record<string, unknown> };
    const adminPathsInPublicDoc = Object.keys(publicDoc.paths).filter((p) => p.startsWith('/admin')).length;

    const figures = {
      encodings,
      guesses: { ...guesses, redisLookups: lookups },
      realKeyAfterGuesses: realKeyAfter.status,
      editorUnknownEqualsProduction: editorSame,
      keyInLogs: logs.text.includes(secret),
      opsSilentConnectionClosedAfterMs: silentMs,
      adminPathsInPublicDoc,
      logBytesTotal: logBytes(),
    };
    report('abuse-lower', figures);
    expect(Object.keys(encodings.statuses).every((s) => s === '400' || s === '415')).to.equal(true);
    expect(lookups).to.be.at.most(30);
    expect(guesses.statuses['429']).to.be.greaterThan(0);
    expect(realKeyAfter.status).to.equal(200);
    expect(editorSame).to.equal(true);
    expect(figures.keyInLogs).to.equal(false);
    expect(silentMs).to.be.below(15_000);
    expect(adminPathsInPublicDoc).to.equal(0);
  });
});
