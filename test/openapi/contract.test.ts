// A tour of every documented route and status: each answer is checked against the OpenAPI
// document at once (and again by the end-of-run check in hooks.ts).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { freshIPv4 } from '../support/gate.js';
import { ResponseChecker } from '../support/openapi-check.js';
import { recordedResponses } from '../support/response-recorder.js';
import { call, client, newWorkspace, startTestService, testRedis, type ApiResponse } from '../support/service.js';

const ADMIN_TOKEN = 'contract-admin-token-0123456789';
const checker = new ResponseChecker();

function expectDescribed(res: ApiResponse, status: number): void {
  expect(res.status, res.text).to.equal(status);
  const last = recordedResponses().at(-1)!;
  expect(last.status).to.equal(status);
  expect(checker.check(last)).to.equal(undefined);
}

describe('every documented route answers as the OpenAPI document says', () => {
  let service: RunningService;
  let redis: Redis;
  before(async () => {
    service = await startTestService({
      ADMIN_TOKEN,
      MAX_KEYS_PER_PLAYER: '2',
      RATE_LIMIT_FREE: '3',
      MAX_BODY_BYTES: '2048',
    });
    redis = testRedis();
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  it('public data routes: success and error statuses', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const api = client(service, ws.apiKey);
    expectDescribed(await call(service, 'GET', '/openapi.json'), 200);
    expectDescribed(await api.get('/ping'), 200);
    expectDescribed(await call(service, 'GET', '/ping'), 401);

    expectDescribed(await api.get('/data?userId=p1'), 404);
    expectDescribed(await api.get('/data'), 400);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'coins', value: 5 }), 200);
    expectDescribed(await api.post('/data/set', { userId: 42, key: 'bag', value: ['a', { b: true }] }), 200);
    expectDescribed(await api.get('/data?userId=p1&key=coins'), 200);
    expectDescribed(await api.get('/data?userId=p1&key=gems'), 404);
    expectDescribed(await api.get('/data?userId=42'), 200);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'coins' }), 400);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'big', value: 'x'.repeat(4000) }), 413);
    expectDescribed(await api.post('/data/set', undefined, { rawBody: 'coins=5', headers: { 'content-type': 'text/plain' } }), 415);

    expectDescribed(await api.post('/data/increment', { userId: 'p1', key: 'coins', amount: 2.5 }), 200);
    expectDescribed(await api.post('/data/increment', { userId: 'p1', key: 'coins', amount: 'x' }), 400);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'name', value: 'Ann' }), 200);
    expectDescribed(await api.post('/data/increment', { userId: 'p1', key: 'name' }), 409);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'third', value: 1 }), 409);

    expectDescribed(await api.post('/data/delete', { userId: 'p1', key: 'name' }), 200);
    expectDescribed(await api.post('/data/delete', { userId: 'p1' }), 200);
    expectDescribed(await api.get('/data/set'), 405);
    expectDescribed(await api.get('/nothing-here'), 404);
  });

  it('leaderboard routes: success and error statuses', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const api = client(service, ws.apiKey);
    expectDescribed(await api.post('/leaderboards/coins/set', { userId: 'p1', score: 5 }), 200);
    expectDescribed(await api.post('/leaderboards/coins/increment', { userId: 'p2', amount: 2.5 }, { headers: { 'Idempotency-Key': 'c-1' } }), 200);
    expectDescribed(await api.post('/leaderboards/coins/increment', { userId: 'p2', amount: 2.5 }, { headers: { 'Idempotency-Key': 'c-1' } }), 200);
    expectDescribed(await api.post('/leaderboards/coins/increment', { userId: 'p2', amount: 3 }, { headers: { 'Idempotency-Key': 'c-1' } }), 422);
    expectDescribed(await api.post('/leaderboards/coins/increment', { userId: 'p2', amount: 1e308 }), 200);
    expectDescribed(await api.post('/leaderboards/coins/increment', { userId: 'p2', amount: 1e308 }), 409);
    expectDescribed(await api.post('/leaderboards/coins/set', { userId: 'p1' }), 400);
    expectDescribed(await api.get('/leaderboards/coins?limit=1'), 200);
    expectDescribed(await api.get('/leaderboards/coins?period=daily'), 404);
    expectDescribed(await api.get('/leaderboards/coins/players/p1?around=1'), 200);
    expectDescribed(await api.get('/leaderboards/coins/players/nobody'), 404);
    expectDescribed(await api.post('/leaderboards/coins/delete', { userId: 'p1' }), 200);
    expectDescribed(await api.get('/leaderboards/coins/delete'), 405);
  });

  it('403 for a read-only key on a write route', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const readKey = await new AdminOperations(redis).createKey(ws.workspaceId, { scope: 'read' });
    const api = client(service, readKey.apiKey);
    expectDescribed(await api.get('/ping'), 200);
    expectDescribed(await api.post('/data/set', { userId: 'p1', key: 'k', value: 1 }), 403);
  });

  it('429 with Retry-After over the plan limit', async () => {
    const ws = await newWorkspace(redis, 'free');
    const api = client(service, ws.apiKey);
    for (let i = 0; i < 3; i++) expectDescribed(await api.get('/ping'), 200);
    const limited = await api.get('/ping');
    expectDescribed(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
  });

  it('admin API and ops routes', async () => {
    const admin = { baseUrl: `${service.opsUrl}/admin/v1` };
    const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    expectDescribed(await call(admin, 'POST', '/workspaces', { body: { name: 'Studio' } }), 401);
    const created = await call(admin, 'POST', '/workspaces', { ...auth, body: { name: 'Studio', plan: 'pro' } });
    expectDescribed(created, 201);
    const id = created.body.data.workspaceId as string;
    expectDescribed(await call(admin, 'POST', '/workspaces', { ...auth, body: { plan: 'gold' } }), 400);
    expectDescribed(await call(admin, 'GET', '/workspaces', auth), 200);
    expectDescribed(await call(admin, 'GET', `/workspaces/${id}`, auth), 200);
    expectDescribed(await call(admin, 'GET', '/workspaces/ws_missing', auth), 404);
    expectDescribed(await call(admin, 'PATCH', `/workspaces/${id}`, { ...auth, body: { name: 'Studio 2', plan: 'free' } }), 200);
    expectDescribed(await call(admin, 'GET', `/workspaces/${id}/usage?days=3`, auth), 200);
    expectDescribed(await call(admin, 'GET', `/workspaces/${id}/usage?days=0`, auth), 400);
    const key = await call(admin, 'POST', `/workspaces/${id}/keys`, { ...auth, body: { scope: 'read', label: 'ci' } });
    expectDescribed(key, 201);
    expectDescribed(await call(admin, 'GET', `/workspaces/${id}/keys`, auth), 200);
    expectDescribed(await call(admin, 'GET', '/workspaces/ws_missing/keys', auth), 404);
    expectDescribed(await call(admin, 'POST', `/keys/${key.body.data.keyId}/dev`, { ...auth, body: { dev: true } }), 200);
    const rotated = await call(admin, 'POST', `/keys/${key.body.data.keyId}/rotate`, { ...auth, body: { grace: '1h' } });
    expectDescribed(rotated, 201);
    expectDescribed(await call(admin, 'POST', `/keys/${rotated.body.data.key.keyId}/revoke`, auth), 200);
    expectDescribed(await call(admin, 'POST', `/keys/${rotated.body.data.key.keyId}/rotate`, auth), 409);
    expectDescribed(await call(admin, 'POST', '/keys/key_missing/revoke', auth), 404);

    const player = `/workspaces/${id}/players/42`;
    expectDescribed(await call(admin, 'GET', player, auth), 404);
    expectDescribed(await call(admin, 'PUT', player, { ...auth, body: { key: 'coins', value: { n: 1 } } }), 200);
    expectDescribed(await call(admin, 'GET', `${player}?key=coins`, auth), 200);
    expectDescribed(await call(admin, 'GET', player, auth), 200);
    expectDescribed(await call(admin, 'DELETE', `${player}?key=coins`, auth), 200);
    expectDescribed(await call(admin, 'GET', `/audit?workspace=${id}&limit=5`, auth), 200);
    expectDescribed(await call(admin, 'DELETE', `/workspaces/${id}`, auth), 200);
    expectDescribed(await call(admin, 'DELETE', `/workspaces/${id}`, auth), 404);

    const ops = { baseUrl: service.opsUrl };
    expectDescribed(await call(ops, 'GET', '/healthz'), 200);
    expectDescribed(await call(ops, 'GET', '/readyz'), 200);
    expectDescribed(await call(ops, 'GET', '/metrics'), 200);
  });

  it('admin API of platform-only access', async () => {
    const admin = { baseUrl: `${service.opsUrl}/admin/v1` };
    const auth = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
    const address = freshIPv4();
    const range = `${address}/32`;
    expectDescribed(await call(admin, 'POST', '/bans', { ...auth, body: { address, reason: 'contract' } }), 200);
    expectDescribed(await call(admin, 'POST', '/bans', { ...auth, body: { address } }), 409);
    expectDescribed(await call(admin, 'GET', '/bans', auth), 200);
    expectDescribed(await call(admin, 'GET', `/bans/${encodeURIComponent(address)}`, auth), 200);
    expectDescribed(await call(admin, 'GET', '/bans/not-an-address', auth), 400);
    expectDescribed(await call(admin, 'POST', '/ban-allow', { ...auth, body: { entry: range, note: 'contract' } }), 200);
    expectDescribed(await call(admin, 'GET', `/bans/${encodeURIComponent(address)}`, auth), 404);
    expectDescribed(await call(admin, 'GET', '/ban-allow', auth), 200);
    expectDescribed(await call(admin, 'DELETE', `/ban-allow/${encodeURIComponent(range)}`, auth), 200);
    expectDescribed(await call(admin, 'DELETE', `/ban-allow/${encodeURIComponent(range)}`, auth), 404);
    expectDescribed(await call(admin, 'GET', '/violations?limit=5', auth), 200);
    expectDescribed(await call(admin, 'GET', '/violations?limit=0', auth), 400);
    expectDescribed(await call(admin, 'POST', '/keys/key_missing/dev', { ...auth, body: { dev: true } }), 404);
  });
});

describe('the OpenAPI document under the platform-only access gate', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({ GATE_MODE: 'enforce' });
  });
  after(() => service.close());

  it('describes the 403 the gate answers on public paths, the document itself included', async () => {
    // A loopback caller failing the user-agent check: refused, never banned.
    const headers = { 'user-agent': 'curl/8.5.0' };
    expectDescribed(await call(service, 'GET', '/openapi.json', { headers }), 403);
    expectDescribed(await call(service, 'GET', '/ping', { headers, key: 'pds_' + 'x'.repeat(40) }), 403);
    expectDescribed(await call(service, 'POST', '/data/set', { headers, body: { userId: 'p', key: 'k', value: 1 } }), 403);
  });
});
