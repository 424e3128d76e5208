// The operator's side of platform-only access on the admin API (/admin/v1 on the ops listener).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { banSubject, parseIp } from '../../src/domain/address.js';
import { CURL_UA, freshIPv4, freshIPv6, PLATFORM, via, waitFor } from '../support/gate.js';
import { adminCall } from '../support/admin.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

const TOKEN = 'test-admin-token-0123456789';

describe('admin API: bans, allow-list, violations, development keys', () => {
  let service: RunningService;
  let redis: Redis;
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await adminCall(service, method, path, { token: TOKEN, body });
    return { status: res.status, body: res.body as any };
  };

  before(async () => {
    service = await startTestService({ ADMIN_TOKEN: TOKEN, GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1' });
    redis = testRedis();
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  it('adds, shows, lists and lifts a ban; the running service follows each step', async () => {
    const address = freshIPv6();
    const ws = await newWorkspace(redis);
    const added = await admin('POST', '/bans', { address: address.toUpperCase(), reason: 'abuse report #12' });
    expect(added.status).to.equal(200);
    // An IPv6 address is banned with its /64.
    const subject = banSubject(parseIp(address)!);
    expect(added.body.data).to.deep.include({ address: subject, source: 'operator', note: 'abuse report #12' });
    expect(await waitFor(async () => (await call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(address, PLATFORM) })).status === 403)).to.equal(true);

    expect((await admin('POST', '/bans', { address })).status).to.equal(409);
    const shown = await admin('GET', `/bans/${encodeURIComponent(address)}`);
    expect(shown.body.data.address).to.equal(subject);
    const byRange = await admin('GET', `/bans/${encodeURIComponent(subject)}`);
    expect(byRange.body.data.address).to.equal(subject);
    // Paged: the page that starts just before the subject holds it.
    const before = subject.slice(0, -1);
    const listed = await admin('GET', `/bans?limit=5&after=${encodeURIComponent(before)}`);
    expect(listed.status).to.equal(200);
    expect(listed.body.data.bans.map((b: { address: string }) => b.address)).to.include(subject);

    const lifted = await admin('DELETE', `/bans/${encodeURIComponent(address)}`);
    expect(lifted.status).to.equal(200);
    expect(await waitFor(async () => (await call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(address, PLATFORM) })).status === 200)).to.equal(true);
    expect((await admin('DELETE', `/bans/${encodeURIComponent(address)}`)).status).to.equal(404);
  });

  it('answers bad input with a clear 4xx', async () => {
    const cases: [string, string, unknown, number, RegExp][] = [
      ['POST', '/bans', { address: 'not-an-ip' }, 400, /not an IPv4 or IPv6 address/],
      ['POST', '/bans', { address: '127.1' }, 400, /not an IPv4 or IPv6 address/],
      ['POST', '/bans', {}, 400, /Missing field "address"/],
      ['POST', '/ban-allow', { entry: '10.0.0.0/33' }, 400, /not an IPv4 or IPv6 address or range/],
      ['GET', '/bans/nope', undefined, 400, /not an IPv4 or IPv6 address/],
      ['GET', '/violations?limit=0', undefined, 400, /limit/],
      ['GET', '/violations?limit=abc', undefined, 400, /limit/],
      ['POST', '/keys/key_missing/dev', { dev: true }, 404, /not found/],
      ['POST', '/keys/key_missing/dev', { dev: 'yes' }, 400, /dev/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const res = await admin(method, path, body);
      expect(res.status, `${method} ${path}`).to.equal(status);
      expect(res.body.success).to.equal(false);
      expect(res.body.error, `${method} ${path}`).to.match(message);
    }
  });

  it('allow-lists a range (lifting the bans it covers), refuses to ban inside it, and removes it', async () => {
    const address = freshIPv4();
    expect((await admin('POST', '/bans', { address })).status).to.equal(200);
    const range = `${address.split('.').slice(0, 3).join('.')}.0/24`;
    const allowed = await admin('POST', '/ban-allow', { entry: range, note: 'monitoring' });
    expect(allowed.status).to.equal(200);
    expect(allowed.body.data).to.deep.include({ entry: range, note: 'monitoring' });
    expect(allowed.body.data.lifted).to.include(address);
    expect((await admin('GET', `/bans/${address}`)).status).to.equal(404);
    const refused = await admin('POST', '/bans', { address });
    expect(refused.status).to.equal(409);
    expect(refused.body.error).to.match(/allow-listed/);
    expect((await admin('GET', '/ban-allow')).body.data.map((e: { entry: string }) => e.entry)).to.include(range);
    const removed = await admin('DELETE', `/ban-allow/${encodeURIComponent(range)}`);
    expect(removed.status).to.equal(200);
    expect((await admin('DELETE', `/ban-allow/${encodeURIComponent(range)}`)).status).to.equal(404);
  });

  it('shows recent violations, newest first, filtered by address', async () => {
    const address = freshIPv4();
    const ws = await newWorkspace(redis);
    expect((await call(service, 'GET', '/ping', { key: ws.apiKey, headers: via(address, { 'user-agent': CURL_UA }) })).status).to.equal(403);
    const res = await admin('GET', `/violations?address=${address}&limit=5`);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.have.length(1);
    expect(res.body.data[0]).to.deep.include({ address, outcome: 'banned', mode: 'enforce' });
    expect(res.body.data[0].evidence.workspaceId).to.equal(ws.workspaceId);
    await admin('DELETE', `/bans/${address}`);
  });

  it('marks a key as a development key and back', async () => {
    const ws = await newWorkspace(redis);
    const on = await admin('POST', `/keys/${ws.keyId}/dev`, { dev: true });
    expect(on.status).to.equal(200);
    expect(on.body.data).to.deep.include({ keyId: ws.keyId, dev: true });
    const off = await admin('POST', `/keys/${ws.keyId}/dev`, { dev: false });
    expect(off.body.data.dev).to.equal(false);
  });

  it('is closed without the admin token', async () => {
    const res = await fetch(`${service.opsUrl}/admin/v1/bans`);
    expect(res.status).to.equal(401);
  });
});
