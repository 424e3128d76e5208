// Key scope, expiry, rotation, revocation and plan changes as the public API sees them.
import { expect } from 'chai';
import { testOps } from '../support/admin.js';
import { call, client, newWorkspace, useService } from '../support/service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('key scope, expiry, rotation and plan changes on the public API', () => {
  const t = useService({ RATE_LIMIT_FREE: '3', RATE_LIMIT_PRO: '6' });

  describe('a read key', () => {
    it('may ping and read', async () => {
      const ws = await newWorkspace(t.redis);
      const writer = client(t.service, ws.apiKey);
      expect((await writer.post('/data/set', { userId: 1, key: 'coins', value: 5 })).status).to.equal(200);
      const { apiKey } = await testOps(t.redis).createKey(ws.workspaceId, { scope: 'read' });
      const reader = client(t.service, apiKey);
      expect((await reader.get('/ping')).body.workspaceId).to.equal(ws.workspaceId);
      const one = await reader.get('/data?userId=1&key=coins');
      expect(one.status).to.equal(200);
      expect(one.body.data.value).to.equal(5);
      expect((await reader.get('/data?userId=1')).body.data).to.deep.equal({ coins: 5 });
    });

    for (const [path, body] of [
      ['/data/set', { userId: 1, key: 'coins', value: 99 }],
      ['/data/increment', { userId: 1, key: 'coins', amount: 10 }],
      ['/data/delete', { userId: 1, key: 'coins' }],
      ['/data/delete', { userId: 1 }],
    ] as const) {
      it(`gets 403 from POST ${path} ${JSON.stringify(body)} and changes nothing`, async () => {
        const ws = await newWorkspace(t.redis);
        await client(t.service, ws.apiKey).post('/data/set', { userId: 1, key: 'coins', value: 5 });
        const { apiKey } = await testOps(t.redis).createKey(ws.workspaceId, { scope: 'read' });
        const res = await client(t.service, apiKey).post(path, body);
        expect(res.status).to.equal(403);
        expect(res.body).to.deep.equal({
          success: false,
          error: 'This API key is read-only: it may ping and read, not change data',
          code: 'FORBIDDEN',
        });
        const after = await client(t.service, ws.apiKey).get('/data?userId=1&key=coins');
        expect(after.body.data.value).to.equal(5);
      });
    }

    it('a write key made next to it may still write', async () => {
      const ws = await newWorkspace(t.redis);
      const { apiKey } = await testOps(t.redis).createKey(ws.workspaceId, { scope: 'write', label: 'server' });
      expect((await client(t.service, apiKey).post('/data/increment', { userId: 1, key: 'n' })).body.value).to.equal(1);
    });
  });

  it('an expired key answers 401 like a revoked one', async () => {
    const ws = await newWorkspace(t.redis);
    // Created "an hour ago" with a one-minute expiry: expired now, without waiting.
    const past = testOps(t.redis, { clock: () => Date.now() - 3_600_000 });
    const { apiKey } = await past.createKey(ws.workspaceId, { expiresIn: '60s' });
    const res = await call(t.service, 'GET', '/ping', { key: apiKey });
    expect(res.status).to.equal(401);
    expect(res.body).to.deep.equal({ success: false, error: 'API key has expired', code: 'KEY_EXPIRED' });
    const listed = await testOps(t.redis).listKeys(ws.workspaceId);
    expect(listed.find((k) => k.expiresAt !== null)?.status).to.equal('expired');
  });

  it('a key with a future expiry works until then', async () => {
    const ws = await newWorkspace(t.redis);
    const { apiKey, expiresAt } = await testOps(t.redis).createKey(ws.workspaceId, { expiresIn: '1h' });
    expect(Date.parse(expiresAt!)).to.be.greaterThan(Date.now() + 3_500_000);
    expect((await call(t.service, 'GET', '/ping', { key: apiKey })).status).to.equal(200);
  });

  it('a revoked key is refused at once, even after it was cached', async () => {
    const ws = await newWorkspace(t.redis);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    await testOps(t.redis).revokeKey(ws.keyId);
    const res = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    expect(res.status).to.equal(401);
    expect(res.body.error).to.equal('API key has been revoked');
  });

  it('rotation without grace: the new key works, the old one stops at once', async () => {
    const ws = await newWorkspace(t.redis);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    const rotated = await testOps(t.redis).rotateKey(ws.keyId);
    expect(rotated.previous.status).to.equal('revoked');
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
    expect((await call(t.service, 'GET', '/ping', { key: rotated.key.apiKey })).status).to.equal(200);
  });

  it('rotation with grace: both keys work during the grace, then only the new one', async () => {
    const ws = await newWorkspace(t.redis);
    await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    const rotated = await testOps(t.redis).rotateKey(ws.keyId, { grace: '1500ms' });
    expect(rotated.previous.status).to.equal('active');
    expect(rotated.key.scope).to.equal('write');
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    expect((await call(t.service, 'GET', '/ping', { key: rotated.key.apiKey })).status).to.equal(200);
    await sleep(1600);
    const old = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    expect(old.status).to.equal(401);
    expect(old.body.error).to.equal('API key has expired');
    expect((await call(t.service, 'GET', '/ping', { key: rotated.key.apiKey })).status).to.equal(200);
  });

  it('rotating keeps the scope and label, and a revoked key cannot be rotated (409)', async () => {
    const ws = await newWorkspace(t.redis);
    const ops = testOps(t.redis);
    const read = await ops.createKey(ws.workspaceId, { scope: 'read', label: 'dashboard' });
    const rotated = await ops.rotateKey(read.keyId, { grace: '1h' });
    expect(rotated.key.scope).to.equal('read');
    expect(rotated.key.label).to.equal('dashboard');
    expect((await client(t.service, rotated.key.apiKey).post('/data/set', { userId: 1, key: 'k', value: 1 })).status).to.equal(403);
    await ops.revokeKey(read.keyId);
    const err = await ops.rotateKey(read.keyId).catch((e: unknown) => e);
    expect((err as { status?: number }).status).to.equal(409);
  });

  it('a plan change is seen by ping at once and by the limit from the next request', async () => {
    const ws = await newWorkspace(t.redis, 'free', 'Plan Studio');
    const api = client(t.service, ws.apiKey);
    const first = await api.get('/ping');
    expect(first.body.plan).to.equal('free');
    expect(first.headers.get('x-ratelimit-limit')).to.equal('3');
    await api.get('/ping');
    await api.get('/ping');
    expect((await api.get('/ping')).status).to.equal(429);

    await testOps(t.redis).setPlan(ws.workspaceId, 'pro');
    const after = await api.get('/ping');
    expect(after.status).to.equal(200);
    expect(after.body.plan).to.equal('pro');
    expect(after.headers.get('x-ratelimit-limit')).to.equal('6');
    // Three passed in this window; the refused fourth took nothing from the budget.
    expect(after.headers.get('x-ratelimit-remaining')).to.equal('2');

    await testOps(t.redis).setPlan(ws.workspaceId, 'free');
    const down = await api.get('/ping');
    expect(down.status).to.equal(429);
    expect(down.headers.get('x-ratelimit-limit')).to.equal('3');
  });

  it('a rename is seen by ping at once', async () => {
    const ws = await newWorkspace(t.redis, 'pro', 'Old Name');
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).body.workspaceName).to.equal('Old Name');
    await testOps(t.redis).renameWorkspace(ws.workspaceId, 'New Name');
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).body.workspaceName).to.equal('New Name');
  });
});
