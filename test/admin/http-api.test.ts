// The admin HTTP API on the ops listener: its token gate, its absence without ADMIN_TOKEN, the
// separation from the public API, and each operation in the standard envelope.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { adminCall, ADMIN_TOKEN } from '../support/admin.js';
import { call, client, newWorkspace, startTestService, testRedis } from '../support/service.js';

describe('admin HTTP API', () => {
  let service: RunningService;
  let redis: Redis;
  before(async () => {
    service = await startTestService({ ADMIN_TOKEN });
    redis = testRedis();
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  describe('access', () => {
    it('refuses a missing, wrong or malformed token with 401 in the envelope', async () => {
      for (const [token, headers] of [
        [null, {}],
        ['wrong-token-wrong-token', {}],
        [ADMIN_TOKEN.slice(0, -1), {}],
        [`${ADMIN_TOKEN}x`, {}],
        [null, { authorization: `Basic ${ADMIN_TOKEN}` }],
        [null, { authorization: ADMIN_TOKEN }],
      ] as const) {
        const res = await adminCall(service, 'GET', '/workspaces', { token, headers });
        expect(res.status, `${token} ${JSON.stringify(headers)}`).to.equal(401);
        expect(res.body.success).to.equal(false);
        expect(res.body.error).to.match(/admin token/);
      }
    });

    it('is not opened by a public API key, as a bearer token or in x-api-key', async () => {
      const ws = await newWorkspace(redis);
      expect((await adminCall(service, 'GET', '/workspaces', { token: ws.apiKey })).status).to.equal(401);
      const res = await adminCall(service, 'GET', '/workspaces', { token: null, headers: { 'x-api-key': ws.apiKey } });
      expect(res.status).to.equal(401);
    });

    it('the admin token does not open the public API', async () => {
      expect((await call(service, 'GET', '/ping', { key: ADMIN_TOKEN })).status).to.equal(401);
      const bearer = await call(service, 'GET', '/ping', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(bearer.status).to.equal(401);
    });

    it('is not served on the public port', async () => {
      const res = await fetch(service.baseUrl.replace('/api/v1', '/admin/v1/workspaces'), {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(res.status).to.equal(404);
    });

    it('is absent (404) when ADMIN_TOKEN is unset, while health probes still answer', async () => {
      const plain = await startTestService();
      try {
        // Plain fetch: the OpenAPI document describes the admin API as it is when it is on.
        const res = await fetch(`${plain.opsUrl}/admin/v1/workspaces`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
        expect(res.status).to.equal(404);
        expect(((await res.json()) as { success: boolean }).success).to.equal(false);
        expect((await fetch(`${plain.opsUrl}/healthz`)).status).to.equal(200);
      } finally {
        await plain.close();
      }
    });
  });

  describe('operations', () => {
    it('POST /workspaces creates a workspace and its first key; GET shows and lists it', async () => {
      const res = await adminCall(service, 'POST', '/workspaces', { body: { name: 'HTTP Studio', plan: 'pro' } });
      expect(res.status).to.equal(201);
      expect(res.body.success).to.equal(true);
      expect(Object.keys(res.body.data).sort()).to.deep.equal(['apiKey', 'keyId', 'name', 'plan', 'workspaceId']);
      const { workspaceId, apiKey } = res.body.data;
      expect((await call(service, 'GET', '/ping', { key: apiKey })).body.workspaceName).to.equal('HTTP Studio');

      const shown = await adminCall(service, 'GET', `/workspaces/${workspaceId}`);
      expect(shown.body.data).to.include({ id: workspaceId, name: 'HTTP Studio', plan: 'pro' });
      expect(shown.body.data.keys).to.have.length(1);
      const list = await adminCall(service, 'GET', '/workspaces');
      expect(list.body.data.map((w: { id: string }) => w.id)).to.include(workspaceId);
    });

    it('PATCH renames and changes the plan, seen by ping at once; DELETE erases', async () => {
      const ws = await newWorkspace(redis, 'free', 'Before');
      const res = await adminCall(service, 'PATCH', `/workspaces/${ws.workspaceId}`, { body: { name: 'After', plan: 'pro' } });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ name: 'After', plan: 'pro' });
      const ping = await call(service, 'GET', '/ping', { key: ws.apiKey });
      expect(ping.body).to.include({ workspaceName: 'After', plan: 'pro' });

      await client(service, ws.apiKey).post('/data/set', { userId: 5, key: 'a', value: 1 });
      const del = await adminCall(service, 'DELETE', `/workspaces/${ws.workspaceId}`);
      expect(del.body).to.deep.equal({
        success: true,
        data: { workspaceId: ws.workspaceId, keysDeleted: 1, playersDeleted: 1 },
      });
      expect((await adminCall(service, 'GET', `/workspaces/${ws.workspaceId}`)).status).to.equal(404);
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
      const swept = await adminCall(service, 'DELETE', `/workspaces/${ws.workspaceId}?force=true`);
      expect(swept.body.data).to.deep.equal({ workspaceId: ws.workspaceId, keysDeleted: 0, playersDeleted: 0 });
    });

    it('keys: create with scope, label and expiry; list; rotate with grace; revoke', async () => {
      const ws = await newWorkspace(redis);
      const made = await adminCall(service, 'POST', `/workspaces/${ws.workspaceId}/keys`, {
        body: { scope: 'read', label: 'analytics', expiresIn: '30d' },
      });
      expect(made.status).to.equal(201);
      expect(made.body.data).to.include({ scope: 'read', label: 'analytics' });
      const plain = await adminCall(service, 'POST', `/workspaces/${ws.workspaceId}/keys`);
      expect(plain.status).to.equal(201);
      expect(plain.body.data).to.include({ scope: 'write', expiresAt: null });

      const list = await adminCall(service, 'GET', `/workspaces/${ws.workspaceId}/keys`);
      expect(list.body.data).to.have.length(3);
      expect(list.text).not.to.include(made.body.data.apiKey);

      const rotated = await adminCall(service, 'POST', `/keys/${ws.keyId}/rotate`, { body: { grace: '1h' } });
      expect(rotated.status).to.equal(201);
      expect(rotated.body.data.previous).to.include({ keyId: ws.keyId, status: 'active' });
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
      expect((await call(service, 'GET', '/ping', { key: rotated.body.data.key.apiKey })).status).to.equal(200);

      const revoked = await adminCall(service, 'POST', `/keys/${ws.keyId}/revoke`);
      expect(revoked.body.data.status).to.equal('revoked');
      expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(401);
    });

    it('usage: requests and 429s today, players, last use of each key', async () => {
      const limited = await startTestService({ ADMIN_TOKEN, RATE_LIMIT_FREE: '2' });
      try {
        const ws = await newWorkspace(redis, 'free');
        const api = client(limited, ws.apiKey);
        await api.post('/data/set', { userId: 1, key: 'a', value: 1 });
        await api.post('/data/set', { userId: 2, key: 'a', value: 1 });
        expect((await api.get('/ping')).status).to.equal(429);
        await limited.lastUsed.flush();
        await limited.limiter.usage.flush();
        const res = await adminCall(limited, 'GET', `/workspaces/${ws.workspaceId}/usage`);
        expect(res.status).to.equal(200);
        const usage = res.body.data;
        expect(usage.days).to.have.length(30);
        expect(usage.days[0]).to.deep.equal({ date: new Date().toISOString().slice(0, 10), requests: 3, limited: 1 });
        expect(usage.totals).to.deep.equal({ requests: 3, limited: 1 });
        expect(usage.players).to.equal(2);
        expect(Date.now() - Date.parse(usage.keys[0].lastUsedAt)).to.be.within(0, 60_000);
        expect((await adminCall(limited, 'GET', `/workspaces/${ws.workspaceId}/usage?days=7`)).body.data.days).to.have.length(7);
      } finally {
        await limited.close();
      }
    });

    it('players: put, get one key, export, delete one key, delete all', async () => {
      const ws = await newWorkspace(redis);
      const base = `/workspaces/${ws.workspaceId}/players/42`;
      const put = await adminCall(service, 'PUT', base, { body: { key: 'inv', value: ['a', { b: 2 }] } });
      expect(put.status).to.equal(200);
      expect(put.body.data).to.include({ key: 'inv' });
      await adminCall(service, 'PUT', base, { body: { key: 'coins', value: 10 } });
      // Written by support staff, read by the game through the public API.
      expect((await client(service, ws.apiKey).get('/data?userId=42&key=coins')).body.data.value).to.equal(10);

      expect((await adminCall(service, 'GET', `${base}?key=inv`)).body.data.value).to.deep.equal(['a', { b: 2 }]);
      const exported = await adminCall(service, 'GET', base);
      expect(Object.keys(exported.body.data.data).sort()).to.deep.equal(['coins', 'inv']);
      expect(exported.body.data.version).to.equal(2);
      expect((await adminCall(service, 'DELETE', `${base}?key=coins`)).body.data).to.deep.equal({ deleted: 1, version: 3 });
      expect((await adminCall(service, 'DELETE', base)).body.data).to.deep.equal({ deleted: 1, version: 4 });
      const gone = await adminCall(service, 'GET', base);
      expect(gone.status).to.equal(404);
      expect(gone.body).to.deep.equal({ success: false, error: 'Player not found', code: 'PLAYER_NOT_FOUND', version: 4 });
    });

    it('audit: lists actions by admin-api, filterable by workspace', async () => {
      const ws = await newWorkspace(redis);
      await adminCall(service, 'PATCH', `/workspaces/${ws.workspaceId}`, { body: { plan: 'free' } });
      const res = await adminCall(service, 'GET', `/audit?workspace=${ws.workspaceId}&limit=5`);
      expect(res.body.data[0]).to.include({ actor: 'admin-api', action: 'workspace.set-plan', target: `workspace:${ws.workspaceId}` });
    });

    it('answers bad input with a clear 4xx in the envelope, never a 500', async () => {
      const ws = await newWorkspace(redis);
      const cases: Array<[string, string, unknown, number, RegExp]> = [
        ['POST', '/workspaces', {}, 400, /Missing field "name"/],
        ['POST', '/workspaces', { name: 'x', plan: 'gold' }, 400, /plan/],
        ['POST', '/workspaces', { name: 'x', extra: 1 }, 400, /Unknown field "extra"/],
        ['PATCH', `/workspaces/${ws.workspaceId}`, {}, 400, /body/],
        ['POST', `/workspaces/${ws.workspaceId}/keys`, { scope: 'admin' }, 400, /scope/],
        ['POST', `/workspaces/${ws.workspaceId}/keys`, { expiresAt: 'soon' }, 400, /expiresAt/],
        ['POST', `/keys/${ws.keyId}/rotate`, { grace: 'forever' }, 400, /grace/],
        ['PUT', `/workspaces/${ws.workspaceId}/players/1`, { key: 'k' }, 400, /Missing field "value"/],
        ['PUT', `/workspaces/${ws.workspaceId}/players/bad!id`, { key: 'k', value: 1 }, 400, /User id/],
        ['GET', '/workspaces/ws_nope', undefined, 404, /not found/],
        ['GET', '/workspaces/ws_nope/usage', undefined, 404, /not found/],
        ['POST', '/keys/key_nope/revoke', undefined, 404, /not found/],
        ['GET', `/workspaces/${ws.workspaceId}/usage?days=99`, undefined, 400, /days/],
        ['GET', '/audit?limit=0', undefined, 400, /limit/],
        ['DELETE', '/workspaces/ws_nope?force=maybe', undefined, 400, /force/],
        ['DELETE', '/workspaces/ws_nope', undefined, 404, /not found/],
        ['DELETE', '/workspaces', undefined, 405, /./],
        ['GET', '/nothing-here', undefined, 404, /No such endpoint/],
      ];
      for (const [method, path, body, status, message] of cases) {
        const res = await adminCall(service, method, path, { body });
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
        expect(res.body.success).to.equal(false);
        expect(res.body.error).to.match(message);
      }
      const raw = await fetch(`${service.opsUrl}/admin/v1/workspaces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: '{"name":',
      });
      expect(raw.status).to.equal(400);
    });
  });
});
