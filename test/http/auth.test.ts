// Authentication: keys by SHA-256, revocation at once on every instance, workspace isolation.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { generateApiKey, hashApiKey } from '../../src/domain/api-key.js';
import { ApiKeyStore } from '../../src/store/workspaces/api-keys.js';
import { publishEvent } from '../../src/store/redis/events.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { call, client, newWorkspace, startTestService, testRedis } from '../support/service.js';

describe('authentication', () => {
  let a: RunningService;
  let b: RunningService;
  let redis: Redis;
  let ops: AdminOperations;

  before(async () => {
    a = await startTestService();
    b = await startTestService();
    redis = testRedis();
    ops = new AdminOperations(redis);
  });
  after(async () => {
    await a.close();
    await b.close();
    redis.disconnect();
  });

  it('answers 401 in the envelope for a missing, unknown or malformed key on every endpoint', async () => {
    const endpoints: Array<[string, string, unknown]> = [
      ['GET', '/ping', undefined],
      ['GET', '/data?userId=1', undefined],
      ['GET', '/data?userId=1&key=k', undefined],
      ['POST', '/data/set', { userId: 1, key: 'k', value: 1 }],
      ['POST', '/data/increment', { userId: 1, key: 'k' }],
      ['POST', '/data/delete', { userId: 1 }],
    ];
    for (const key of [undefined, '', 'pds_' + 'A'.repeat(40), 'Bearer x', 'pds_short']) {
      for (const [method, path, body] of endpoints) {
        const res = await call(a, method, path, { key, body });
        expect(res.status, `${method} ${path} ${key}`).to.equal(401);
        expect(res.body.success).to.equal(false);
        expect(res.body.error).to.match(/API key/);
      }
    }
  });

  it('stores only the SHA-256 of a key, never the key itself', async () => {
    const ws = await newWorkspace(redis);
    const record = await redis.hgetall(keys.apiKey(hashApiKey(ws.apiKey)));
    expect(record['workspaceId']).to.equal(ws.workspaceId);
    expect(record['status']).to.equal('active');
    expect(JSON.stringify(record)).to.not.include(ws.apiKey);
    expect(ws.apiKey).to.match(/^pds_[0-9A-Za-z]{40}$/);
    expect(record['prefix']).to.equal(ws.apiKey.slice(0, 10));
  });

  it('refuses a revoked key at once, on every instance, although both had it cached', async () => {
    const ws = await newWorkspace(redis);
    expect((await call(a, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    expect((await call(b, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    const hitsBefore = a.authenticator.stats.hits;
    expect((await call(a, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
    expect(a.authenticator.stats.hits).to.be.greaterThan(hitsBefore); // served from the cache

    await ops.revokeKey(ws.keyId);
    // The invalidation travels over pub/sub; allow it a few milliseconds, not a TTL.
    await new Promise((r) => setTimeout(r, 50));
    for (const service of [a, b]) {
      const res = await call(service, 'GET', '/ping', { key: ws.apiKey });
      expect(res.status).to.equal(401);
      expect(res.body).to.deep.equal({ success: false, error: 'API key has been revoked', code: 'KEY_REVOKED' });
    }
  });

  it('accepts a key created after an instance cached it as unknown', async () => {
    const ws = await newWorkspace(redis);
    const raw = generateApiKey();
    // The instance looks the key up before it exists, and caches "unknown".
    expect((await call(a, 'GET', '/ping', { key: raw })).status).to.equal(401);
    const missesBefore = a.authenticator.stats.misses;
    expect((await call(a, 'GET', '/ping', { key: raw })).status).to.equal(401);
    expect(a.authenticator.stats.misses).to.equal(missesBefore); // answered from the cache
    // Creating the key publishes its hash, which drops the cached "unknown" everywhere.
    const keyHash = hashApiKey(raw);
    await new ApiKeyStore(redis).create(keyHash, {
      keyId: 'key_' + keyHash.slice(0, 16),
      workspaceId: ws.workspaceId,
      status: 'active',
      scope: 'write',
      prefix: raw.slice(0, 10),
      createdAt: new Date().toISOString(),
    });
    await publishEvent(redis, { type: 'key', keyHash });
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(a, 'GET', '/ping', { key: raw })).status).to.equal(200);
  });

  it('refuses an expired key like a revoked one', async () => {
    const ws = await newWorkspace(redis);
    const soon = await ops.createKey(ws.workspaceId, { expiresAt: new Date(Date.now() + 300).toISOString() });
    expect((await call(a, 'GET', '/ping', { key: soon.apiKey })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 400));
    const res = await call(a, 'GET', '/ping', { key: soon.apiKey });
    expect(res.status).to.equal(401);
    expect(res.body.error).to.equal('API key has expired');
  });

  it('isolates workspaces: the same userId and key are different data in each', async () => {
    const one = client(a, (await newWorkspace(redis)).apiKey);
    const two = client(a, (await newWorkspace(redis)).apiKey);
    await one.post('/data/set', { userId: 1, key: 'coins', value: 111 });
    expect((await two.get('/data?userId=1&key=coins')).status).to.equal(404);
    expect((await two.get('/data?userId=1')).status).to.equal(404);
    await two.post('/data/set', { userId: 1, key: 'coins', value: 222 });
    await two.post('/data/increment', { userId: 1, key: 'coins', amount: 1 });
    expect((await one.get('/data?userId=1&key=coins')).body.data.value).to.equal(111);
    expect((await two.post('/data/delete', { userId: 1 })).body.data.deleted).to.equal(1);
    expect((await one.get('/data?userId=1&key=coins')).body.data.value).to.equal(111);
  });

  it('a read key may ping and read; writes with it are 403', async () => {
    const ws = await newWorkspace(redis);
    const read = await ops.createKey(ws.workspaceId, { scope: 'read' });
    await client(a, ws.apiKey).post('/data/set', { userId: 1, key: 'k', value: 1 });
    const r = client(a, read.apiKey);
    expect((await r.get('/ping')).status).to.equal(200);
    expect((await r.get('/data?userId=1&key=k')).body.data.value).to.equal(1);
    for (const [path, body] of [
      ['/data/set', { userId: 1, key: 'k', value: 2 }],
      ['/data/increment', { userId: 1, key: 'k' }],
      ['/data/delete', { userId: 1 }],
    ] as const) {
      const res = await r.post(path, body);
      expect(res.status, path).to.equal(403);
      expect(res.body).to.deep.equal({ success: false, error: 'This API key is read-only: it may ping and read, not change data', code: 'FORBIDDEN' });
    }
    expect((await r.get('/data?userId=1&key=k')).body.data.value).to.equal(1);
  });
});
