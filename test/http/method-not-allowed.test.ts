// Answers of no declared operation: a wrong method is 405 with the Allow header HTTP requires,
// on the public, admin and ops routes alike; without ADMIN_TOKEN the admin paths say what turns
// them on; both shared answers are in the OpenAPI document, and every 503 there has Retry-After.
import { expect } from 'chai';
import { buildOpenApiDocument } from '../../src/openapi/document.js';
import type { RunningService } from '../../src/server.js';
import { fetchRecorded, newWorkspace, startTestService, testRedis } from '../support/service.js';

const TOKEN = 'method-test-admin-token-0123456789';

describe('wrong methods and switched-off routes', () => {
  let service: RunningService;
  before(async () => {
    service = await startTestService({ ADMIN_TOKEN: TOKEN });
  });
  after(() => service.close());

  const admin = { authorization: `Bearer ${TOKEN}` };

  it('answers 405 with Allow on public, admin and ops paths', async () => {
    for (const [url, method, allow] of [
      [`${service.baseUrl}/ping`, 'POST', 'HEAD, GET'],
      [`${service.baseUrl}/data`, 'DELETE', 'HEAD, GET'],
      [`${service.baseUrl}/data/set`, 'GET', 'POST'],
      [`${service.baseUrl}/openapi.json`, 'POST', 'HEAD, GET'],
      [`${service.opsUrl}/healthz`, 'POST', 'HEAD, GET'],
      [`${service.opsUrl}/readyz`, 'DELETE', 'HEAD, GET'],
      [`${service.opsUrl}/admin/v1/workspaces`, 'PUT', 'HEAD, GET, POST'],
    ] as const) {
      const res = await fetchRecorded(url, method, admin, undefined);
      expect(res.status, `${method} ${url}`).to.equal(405);
      expect(res.headers.get('allow'), `${method} ${url}`).to.equal(allow);
      expect(res.body).to.deep.equal({
        success: false,
        error: `Method ${method} is not allowed here; this endpoint takes ${allow}`,
        code: 'METHOD_NOT_ALLOWED',
      });
    }
  });

  it('a PATCH that sets nothing says which fields it takes', async () => {
    const redis = testRedis();
    const ws = await newWorkspace(redis);
    redis.disconnect();
    const res = await fetchRecorded(
      `${service.opsUrl}/admin/v1/workspaces/${ws.workspaceId}`,
      'PATCH',
      { ...admin, 'content-type': 'application/json' },
      '{}',
    );
    expect(res.status).to.equal(400);
    expect(res.body).to.deep.equal({
      success: false,
      error: 'Request body must set at least one of the fields "name", "plan"',
      code: 'INVALID_REQUEST',
    });
  });

  it('without ADMIN_TOKEN, the admin API and console paths say what to set, and nothing more', async () => {
    const off = await startTestService();
    try {
      for (const path of ['/admin/v1/workspaces', '/admin', '/console/', '/console/session']) {
        const res = await fetchRecorded(`${off.opsUrl}${path}`, 'GET', admin, undefined);
        expect(res.status, path).to.equal(404);
        expect(res.body.code, path).to.equal('ADMIN_API_OFF');
        expect(res.body.error).to.match(/^The admin API and the operator console are off on this instance: set ADMIN_TOKEN /);
        expect(res.text).not.to.include(TOKEN);
      }
      expect((await fetchRecorded(`${off.opsUrl}/healthz`, 'GET', {}, undefined)).status).to.equal(200);
      expect((await fetchRecorded(`${off.opsUrl}/administrator`, 'GET', {}, undefined)).body.code).to.equal('NOT_FOUND');
    } finally {
      await off.close();
    }
  });

  it('the OpenAPI document describes 404, 405 (with Allow) and Retry-After on every 503', () => {
    for (const audience of ['public', 'ops'] as const) {
      const doc = buildOpenApiDocument(audience) as any;
      expect(doc.servers).to.have.length(1);
      expect(doc.components.responses.UnknownRoute.content['application/json'].schema).to.deep.equal({ $ref: '#/components/schemas/Error' });
      expect(doc.components.responses.MethodNotAllowed.headers.Allow.required).to.equal(true);
      let seen = 0;
      for (const item of Object.values<any>(doc.paths)) {
        for (const op of Object.values<any>(item)) {
          const unavailable = op?.responses?.['503'];
          if (!unavailable) continue;
          seen++;
          expect(unavailable.headers['Retry-After'].required, op.operationId).to.equal(true);
        }
      }
      expect(seen, audience).to.be.greaterThan(3);
    }
  });
});
