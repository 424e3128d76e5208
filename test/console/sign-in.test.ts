// The console's sign-in over plain HTTP: cookie flags, idle expiry, CSRF and same-origin
// checks, the limit on wrong tokens, sign-out, the audit name, and the token never echoed.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '../../src/logger.js';
import { startService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { fetchFrom, randomLoopback } from '../support/from-address.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy } from '../support/redis-proxy.js';
import { LogCapture } from '../support/log-capture.js';
import { ADMIN_TOKEN, adminCall } from '../support/admin.js';
import { fetchRecorded, startTestService, testConfig, useService, type ApiResponse } from '../support/service.js';
import { ensureConsoleBuilt } from './support.js';

interface Signed {
  cookie: string;
  sessionId: string;
  csrf: string;
  setCookie: string;
}

/** Signs in; the answer is recorded, to be checked against the OpenAPI document. */
async function signInHttp(opsUrl: string, token = ADMIN_TOKEN, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return fetchRecorded(`${opsUrl}/console/session`, 'POST', { 'content-type': 'application/json', ...headers }, JSON.stringify({ token }));
}

async function signedIn(opsUrl: string, headers: Record<string, string> = {}): Promise<Signed> {
  const res = await signInHttp(opsUrl, ADMIN_TOKEN, headers);
  expect(res.status).to.equal(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  const sessionId = /pds_console=([^;]*)/.exec(setCookie)![1]!;
  return { cookie: `pds_console=${sessionId}`, sessionId, csrf: res.body.data.csrfToken, setCookie };
}

const sessionKey = (sessionId: string) => keys.consoleSession(createHash('sha256').update(sessionId).digest('hex'));

describe('console session', function () {
  this.timeout(20_000);
  const h = useService({ ADMIN_TOKEN, CONSOLE_SIGNIN_ATTEMPTS: '3' });
  before(() => ensureConsoleBuilt());

  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie with the idle time, Secure only over HTTPS', async () => {
    const plain = await signedIn(h.service.opsUrl);
    expect(plain.setCookie).to.match(/^pds_console=[\w-]{43}; Path=\/; Max-Age=1800; HttpOnly; SameSite=Strict$/);
    const pttl = await h.redis.pttl(sessionKey(plain.sessionId));
    expect(pttl).to.be.within(1_790_000, 1_800_000);
    const https = await signedIn(h.service.opsUrl, { 'x-forwarded-proto': 'https' });
    expect(https.setCookie).to.match(/; HttpOnly; SameSite=Strict; Secure$/);
  });

  it('opens the admin API to the session, and records its actions under the console actor', async () => {
    const s = await signedIn(h.service.opsUrl);
    const made = await fetch(`${h.service.opsUrl}/admin/v1/workspaces`, {
      method: 'POST',
      headers: { cookie: s.cookie, 'x-csrf-token': s.csrf, 'content-type': 'application/json', origin: h.service.opsUrl },
      body: JSON.stringify({ name: 'console-made' }),
    });
    expect(made.status).to.equal(201);
    const id = ((await made.json()) as { data: { workspaceId: string } }).data.workspaceId;
    const audit = await adminCall(h.service, 'GET', `/audit?workspace=${id}`);
    expect(audit.body.data[0]).to.include({ actor: 'console', action: 'workspace.create' });
    const read = await fetch(`${h.service.opsUrl}/admin/v1/workspaces/${id}`, { headers: { cookie: s.cookie } });
    expect(read.status).to.equal(200);
  });

  it('refuses a state-changing call without the CSRF token, and a cross-site form post', async () => {
    const s = await signedIn(h.service.opsUrl);
    const noToken = await fetchRecorded(
      `${h.service.opsUrl}/admin/v1/workspaces`,
      'POST',
      { cookie: s.cookie, 'content-type': 'application/json' },
      JSON.stringify({ name: 'no-csrf' }),
    );
    expect(noToken.status).to.equal(403);
    expect(noToken.body.error).to.match(/CSRF/);
    // What a form on another site would send, were the browser to attach the cookie at all
    // (SameSite=Strict means it does not): a urlencoded POST with a foreign Origin.
    const forged = await fetch(`${h.service.opsUrl}/admin/v1/workspaces`, {
      method: 'POST',
      headers: {
        cookie: s.cookie,
        'content-type': 'application/x-www-form-urlencoded',
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'x-csrf-token': s.csrf,
      },
      body: 'name=forged',
    });
    expect(forged.status).to.equal(403);
    const signInForged = await signInHttp(h.service.opsUrl, ADMIN_TOKEN, { origin: 'https://evil.example' });
    expect(signInForged.status).to.equal(403);
    const list = await adminCall(h.service, 'GET', '/workspaces');
    expect(list.body.data.map((w: { name: string }) => w.name)).to.not.include.members(['forged', 'no-csrf']);
  });

  it('never sends the token back: not in the sign-in answer, the page, or any admin answer', async () => {
    const res = await signInHttp(h.service.opsUrl);
    const texts = [res.text, JSON.stringify([...res.headers])];
    const s = /pds_console=([^;]*)/.exec(res.headers.get('set-cookie')!)![1]!;
    for (const path of ['/console/session', '/console/workspaces', '/admin/v1/workspaces', '/admin/v1/audit?limit=100']) {
      const page = await fetch(`${h.service.opsUrl}${path}`, { headers: { cookie: `pds_console=${s}` } });
      expect(page.status, path).to.equal(200);
      texts.push(await page.text(), JSON.stringify([...page.headers]));
    }
    for (const text of texts) expect(text).to.not.include(ADMIN_TOKEN);
  });

  it('answers a wrong token with 401, and after CONSOLE_SIGNIN_ATTEMPTS of them 429 from that address, even for the right token', async () => {
    try {
      for (let i = 0; i < 3; i++) {
        const wrong = await signInHttp(h.service.opsUrl, 'not-the-admin-token');
        expect(wrong.status).to.equal(401);
        expect(wrong.body).to.include({ code: 'UNAUTHORIZED' });
        expect(wrong.body.error).to.match(/Wrong admin token/);
      }
      const limited = await signInHttp(h.service.opsUrl);
      expect(limited.status).to.equal(429);
      expect(limited.body).to.include({ code: 'RATE_LIMITED' });
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 300);
    } finally {
      await h.redis.del(keys.consoleSignInFailures('127.0.0.1'), keys.consoleSignInFailures('::ffff:127.0.0.1'));
    }
    expect((await signInHttp(h.service.opsUrl)).status).to.equal(200);
  });

  it('signs out: the session ends and the cookie is cleared', async () => {
    const s = await signedIn(h.service.opsUrl);
    const noCsrf = await fetchRecorded(`${h.service.opsUrl}/console/session`, 'DELETE', { cookie: s.cookie }, undefined);
    expect(noCsrf.status).to.equal(403);
    expect(noCsrf.body).to.include({ code: 'FORBIDDEN' });
    const out = await fetchRecorded(`${h.service.opsUrl}/console/session`, 'DELETE', { cookie: s.cookie, 'x-csrf-token': s.csrf }, undefined);
    expect(out.status).to.equal(200);
    expect(out.headers.get('set-cookie')).to.match(/pds_console=; Path=\/; Max-Age=0/);
    const after = await fetchRecorded(`${h.service.opsUrl}/admin/v1/workspaces`, 'GET', { cookie: s.cookie }, undefined);
    expect(after.status).to.equal(401);
    expect((await fetchRecorded(`${h.service.opsUrl}/console/session`, 'GET', { cookie: s.cookie }, undefined)).status).to.equal(401);
    const audit = await adminCall(h.service, 'GET', '/audit?limit=5');
    expect(audit.body.data.map((a: { action: string; actor: string }) => `${a.actor} ${a.action}`)).to.include('console console.sign-out');
  });

  it('serves the page under /console/ with hashed assets cached for a year, and not on the public port', async () => {
    const page = await fetch(`${h.service.opsUrl}/console/workspaces/x`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('cache-control')).to.equal('no-cache');
    expect(page.headers.get('content-security-policy')).to.include("script-src 'self'");
    const html = await page.text();
    const script = /src="(\/console\/assets\/app-\w+\.js)"/.exec(html)![1]!;
    const asset = await fetch(`${h.service.opsUrl}${script}`);
    expect(asset.status).to.equal(200);
    expect(asset.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).to.match(/javascript/);
    expect(html).to.not.match(/https?:\/\//);
    const publicSide = await fetch(`${h.service.baseUrl.replace(/\/api\/v1$/, '')}/console/workspaces`);
    expect(publicSide.status).to.equal(404);
  });
});

describe('console session without activity', function () {
  this.timeout(20_000);
  const h = useService({ ADMIN_TOKEN, CONSOLE_SESSION_IDLE_SECONDS: '1' });

  it('ends after CONSOLE_SESSION_IDLE_SECONDS unused', async () => {
    const s = await signedIn(h.service.opsUrl);
    expect(s.setCookie).to.include('Max-Age=1;');
    expect((await fetch(`${h.service.opsUrl}/console/session`, { headers: { cookie: s.cookie } })).status).to.equal(200);
    const deadline = Date.now() + 10_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      // Redis expires the session on its own clock; ask its remaining time rather than guess.
      const left = await h.redis.pttl(sessionKey(s.sessionId));
      if (left > 0) await new Promise((resolve) => setTimeout(resolve, left + 5));
      status = (await fetch(`${h.service.opsUrl}/admin/v1/workspaces`, { headers: { cookie: s.cookie } })).status;
    }
    expect(status).to.equal(401);
  });
});

describe('console off without ADMIN_TOKEN', () => {
  const h = useService({});
  it('has no /console/', async () => {
    expect((await fetch(`${h.service.opsUrl}/console/workspaces`)).status).to.equal(404);
    // Plain fetch: without ADMIN_TOKEN the route does not exist, so the document has no 404 for it.
    const signIn = await fetch(`${h.service.opsUrl}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"x"}' });
    expect(signIn.status).to.equal(404);
  });
});

describe('console sign-in in the logs', () => {
  it('logs the sign-in, the wrong token and the admin calls without the token, at trace level', async () => {
    const log = new LogCapture();
    const config = testConfig({ ADMIN_TOKEN, LOG_LEVEL: 'trace' });
    const service = await startService(config, createLogger(config, log));
    try {
      expect((await signInHttp(service.opsUrl, `${ADMIN_TOKEN}-wrong`)).status).to.equal(401);
      const s = await signedIn(service.opsUrl);
      await fetch(`${service.opsUrl}/admin/v1/workspaces`, { headers: { cookie: s.cookie } });
      await fetch(`${service.opsUrl}/console/session`, { method: 'DELETE', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf } });
    } finally {
      await service.close();
    }
    expect(log.text).to.include('/console/session');
    expect(log.text).to.not.include(ADMIN_TOKEN);
  });
});

describe('console sign-in under concurrent wrong tokens', () => {
  it('checks at most CONSOLE_SIGNIN_ATTEMPTS of 100 wrong tokens sent at once; the rest, and then the right token, get 429', async () => {
    // Redis's replies held until every sign-in has sent its first command, as a Redis a network
    // away would have them: all 100 are in flight together.
    const proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    const service = await startTestService({ REDIS_URL: proxy.url, ADMIN_TOKEN, CONSOLE_SIGNIN_ATTEMPTS: '5' });
    const from = randomLoopback();
    const signIn = (token: string, address = from) =>
      fetchFrom(address, `${service.opsUrl}/console/session`, 'POST', { 'content-type': 'application/json' }, JSON.stringify({ token }));
    try {
      proxy.reset();
      proxy.hold();
      const pending = Promise.all(Array.from({ length: 100 }, (_, i) => signIn(`wrong-token-${i}`)));
      for (let i = 0; (proxy.sent().match(/console:fail:/g) ?? []).length < 100; i++) {
        expect(i, 'every sign-in reaches Redis').to.be.lessThan(2000);
        await new Promise((r) => setTimeout(r, 5));
      }
      proxy.release();
      const statuses = (await pending).map((a) => a.status);
      expect(statuses.filter((s) => s === 401), statuses.join(' ')).to.have.length(5);
      expect(statuses.filter((s) => s === 429)).to.have.length(95);
      const limited = await signIn(ADMIN_TOKEN);
      expect(limited.status).to.equal(429);
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 300);
      // Another address is not held back by this one's failures.
      expect((await signIn(ADMIN_TOKEN, randomLoopback())).status).to.equal(200);
    } finally {
      proxy.release();
      await service.close();
      await proxy.close();
    }
  });
});
