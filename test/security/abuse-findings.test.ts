// The lower findings of issue 17 (finding 5), each as an attacker would try it: malformed and
// unsupported Content-Encoding, a Content-Length past 2^32, key guessing per address and its
// effect on the key cache, the editor path as a key oracle, percent-encoded keys in paths, a
// silent connection to the ops listener, the public OpenAPI document, and a guessable admin token.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { EDITOR_UA, freshIPv4, PLATFORM, via } from '../support/gate.js';
import { LogCapture } from '../support/log-capture.js';
import { call, fetchRecorded, newWorkspace, startTestService, testConfig, testRedis } from '../support/service.js';

/** A made-up key of the right shape. */
function madeUpKey(): string {
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  let out = 'pds_';
  for (let i = 0; i < 40; i++) out += chars[Math.floor(Math.random() * chars.length)];
  return out;
}

/** Sends raw bytes and collects what comes back until the server closes or `waitMs` passes. */
function rawExchange(port: number, request: string, waitMs: number): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d) => {
      text += d.toString('utf8');
      // A whole answer has come: no need to wait for the close.
      const head = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text);
      if (head >= 0 && length && Buffer.byteLength(text.slice(head + 4)) >= Number(length[1])) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    if (request !== '') socket.write(request);
  });
}

function bodyOf(raw: string): any {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('issue 17, finding 5: the lower findings', () => {
  let redis: Redis;
  let ws: CreatedWorkspace;
  const running = new Set<RunningService>();
  const start = async (env: Record<string, string> = {}, logs?: LogCapture) => {
    const config = testConfig(logs ? { LOG_LEVEL: 'info', ...env } : env);
    const service = logs ? await startService(config, createLogger(config, logs)) : await startTestService(env);
    running.add(service);
    return service;
  };
  before(async () => {
    redis = testRedis();
    ws = await newWorkspace(redis, 'pro', 'Finding Five');
  });
  after(async () => {
    await Promise.all([...running].map((s) => s.close()));
    redis.disconnect();
  });

  describe('Content-Encoding and Content-Length', () => {
    let service: RunningService;
    before(async () => {
      service = await start({ ADMIN_TOKEN });
    });
    const set = (headers: Record<string, string>, rawBody: string | Uint8Array) =>
      call(service, 'POST', '/data/set', { key: ws.apiKey, headers: { 'content-type': 'application/json', ...headers }, rawBody });

    it('answers a malformed gzip, deflate or br body 400 in the envelope, never 500 (public and admin routes)', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await set({ 'content-encoding': encoding }, 'this is not compressed at all');
        expect(res.status, encoding).to.equal(400);
        expect(res.body).to.deep.equal({ success: false, error: `Request body is not valid ${encoding} data`, code: 'INVALID_REQUEST' });
      }
      const admin = await fetchRecorded(
        `${service.opsUrl}/admin/v1/bans`,
        'POST',
        { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        'garbage',
      );
      expect(admin.status).to.equal(400);
      expect(admin.body.code).to.equal('INVALID_REQUEST');
      // A well-formed gzip body still works.
      const good = await set({ 'content-encoding': 'gzip' }, gzipSync(JSON.stringify({ userId: 1, key: 'zipped', value: 1 })));
      expect(good.status).to.equal(200);
    });

    it('answers an unsupported Content-Encoding 415 in the envelope', async () => {
      const res = await set({ 'content-encoding': 'compress' }, 'abc');
      expect(res.status).to.equal(415);
      expect(res.body.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
      expect(res.body.error).to.match(/Content-Encoding "compress" is not supported/);
    });

    it('answers a Content-Length of 2^32 and above 413 at once, where `~~` wrapped it round', async () => {
      for (const length of ['4294967297', '4294967296', '8589934593']) {
        const request =
          `POST /api/v1/data/set HTTP/1.1\r\nHost: x\r\nx-api-key: ${ws.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{}`;
        const res = await rawExchange(service.port, request, 5000);
        expect(res.text, length).to.match(/^HTTP\/1\.1 413 /);
        expect(bodyOf(res.text).code).to.equal('PAYLOAD_TOO_LARGE');
      }
    });
  });

  describe('failed key lookups', () => {
    it('allows AUTH_FAILURES_PER_MINUTE 401s an address, then answers 429 with no Redis call; other addresses and cached keys go on', async () => {
      const service = await start({ AUTH_FAILURES_PER_MINUTE: '5', TRUST_PROXY_HOPS: '1' });
      const attacker = freshIPv4();
      const ping = (key: string, from: string) => call(service, 'GET', '/ping', { key, headers: via(from) });
      expect((await ping(ws.apiKey, attacker)).status).to.equal(200); // the real key, cached now
      for (let i = 0; i < 5; i++) expect((await ping(madeUpKey(), attacker)).status).to.equal(401);
      const misses = service.authenticator.stats.misses;
      const limited = await ping(madeUpKey(), attacker);
      expect(limited.status).to.equal(429);
      expect(limited.body.code).to.equal('RATE_LIMITED');
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
      expect(service.authenticator.stats.misses, 'no lookup past the budget').to.equal(misses);
      // A missing key is no guess and costs no lookup: 401, not counted.
      expect((await call(service, 'GET', '/ping', { headers: via(attacker) })).status).to.equal(401);
      // The real key, cached, still works from that address; other addresses are untouched.
      expect((await ping(ws.apiKey, attacker)).status).to.equal(200);
      expect((await ping(madeUpKey(), freshIPv4())).status).to.equal(401);
    });

    it('keeps unknown keys apart: a flood of made-up keys does not push a real key out of the cache', async () => {
      const service = await start({ KEY_CACHE_MAX: '2', AUTH_FAILURES_PER_MINUTE: '1000' });
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
      for (let i = 0; i < 20; i++) expect((await call(service, 'GET', '/ping', { key: madeUpKey() })).status).to.equal(401);
      const misses = service.authenticator.stats.misses;
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
      expect(service.authenticator.stats.misses, 'the real key was still cached').to.equal(misses);
    });

    it('answers the editor path the same for an unknown, a missing and a production key', async () => {
      const service = await start({ GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1', AUTH_FAILURES_PER_MINUTE: '1000' });
      const from = freshIPv4();
      const editor = (key: string | undefined) =>
        call(service, 'GET', '/ping', { key, headers: via(from, { 'user-agent': EDITOR_UA, 'roblox-id': '1' }) });
      const production = await editor(ws.apiKey);
      const unknown = await editor(madeUpKey());
      const missing = await editor(undefined);
      expect(production.status).to.equal(403);
      expect(unknown.status).to.equal(production.status);
      expect(unknown.body).to.deep.equal(production.body);
      expect(missing.body).to.deep.equal(production.body);
      // Still a platform caller, not banned for it.
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(from, PLATFORM) })).status).to.equal(200);
    });
  });

  it('redacts a key-shaped path segment in the logs however it is percent-encoded', async () => {
    const logs = new LogCapture();
    const service = await start({}, logs);
    const key = madeUpKey();
    const secret = key.slice(5);
    const once = `/pds_%${key.charCodeAt(4).toString(16).toUpperCase()}${secret}`;
    const twice = `/pds_%25${key.charCodeAt(4).toString(16).toUpperCase()}${secret}`;
    const allEncoded = '/' + [...key].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    for (const path of [once, twice, allEncoded, `/data/${encodeURIComponent(key)}x`]) {
      expect((await call(service, 'GET', path, { key: ws.apiKey })).status).to.equal(404);
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(logs.lines.filter((l) => l.includes('"request"')).length).to.be.at.least(4);
    expect(logs.text).not.to.include(secret);
    expect(logs.text).not.to.include(secret.slice(10));
    expect(logs.text).to.include('[redacted]');
  });

  it('gives the ops listener header, request and idle timeouts: a silent or trickling connection is closed', async function () {
    this.timeout(20_000);
    const service = await start({ HTTP_HEADERS_TIMEOUT_MS: '500', HTTP_REQUEST_TIMEOUT_MS: '1000' });
    const opsPort = Number(new URL(service.opsUrl).port);
    const silent = await rawExchange(opsPort, '', 10_000);
    // Closed without a word, or answered 408 and closed: whichever of the silent-connection
    // timer and node's own header timeout fires first.
    const ended = silent.closed || /^HTTP\/1\.1 408 [^]*\r\nConnection: close\r\n/i.test(silent.text);
    expect(ended, `a connection that sends nothing (open ${silent.ms} ms): ${silent.text.slice(0, 80)}`).to.equal(true);
    expect(silent.ms).to.be.below(5000);
    const trickle = await rawExchange(opsPort, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 4000);
    // Headers that never end: answered 408, and the connection closed.
    expect(trickle.text).to.match(/^HTTP\/1\.1 408 /);
    expect(trickle.text).to.match(/\r\nConnection: close\r\n/i);
    expect(bodyOf(trickle.text).code).to.equal('REQUEST_TIMEOUT');
  });

  it('serves the public API alone in the public OpenAPI document, and the admin API in the ops listener\'s', async () => {
    const service = await start({ ADMIN_TOKEN });
    const publicDoc = await call(service, 'GET', '/openapi.json');
    const publicPaths = Object.keys(publicDoc.body.paths);
    expect(publicPaths.length).to.be.greaterThan(3);
    expect(publicPaths.every((p) => p.startsWith('/api/v1/')), publicPaths.join(' ')).to.equal(true);
    expect(JSON.stringify(publicDoc.body)).not.to.match(/admin\/v1|ADMIN_TOKEN|AdminToken/);
    const opsDoc = await fetchRecorded(`${service.opsUrl}/openapi.json`, 'GET', {}, undefined);
    expect(opsDoc.status).to.equal(200);
    const opsPaths = Object.keys(opsDoc.body.paths);
    expect(opsPaths).to.include('/admin/v1/bans').and.include('/healthz').and.include('/openapi.json');
    expect(opsPaths.some((p) => p.startsWith('/api/'))).to.equal(false);
  });

  it('refuses to start with the admin API on a non-loopback ADMIN_HOST and a weak ADMIN_TOKEN', () => {
    const weak = ['a'.repeat(16), 'a'.repeat(64), 'x1'.repeat(12)];
    for (const token of weak) {
      for (const host of ['0.0.0.0', '::', '10.0.0.5', 'admin.internal']) {
        expect(() => loadConfig({ ADMIN_HOST: host, ADMIN_TOKEN: token }), `${host} ${token}`).to.throw(ConfigError, /^ADMIN_HOST=.* is not a loopback address/);
      }
    }
    const strong = 'f3a9c1e07b5d4a2e9c8b7a6f5e4d3c2b';
    expect(loadConfig({ ADMIN_HOST: '0.0.0.0', ADMIN_TOKEN: strong }).admin.token).to.equal(strong);
    // On loopback the 16-character minimum still applies, and the admin API off needs no token.
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.2']) {
      expect(loadConfig({ ADMIN_HOST: host, ADMIN_TOKEN: 'a'.repeat(16) }).admin.host).to.equal(host);
    }
    expect(loadConfig({ ADMIN_HOST: '0.0.0.0' }).admin.token).to.equal(undefined);
  });
});
