import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { call, newWorkspace, testConfig, testRedis } from '../support/service.js';

const ADMIN_TOKEN = 'request-log-admin-token-0123456789';

/** A pino destination that keeps every line it is given. */
function captureLog() {
  const lines: string[] = [];
  return {
    lines,
    stream: { write: (line: string) => void lines.push(line) },
    requests: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'request'),
  };
}

async function startLogged(env: Record<string, string>, log: ReturnType<typeof captureLog>): Promise<RunningService> {
  const config = testConfig({ ADMIN_TOKEN, ...env });
  return startService(config, createLogger(config, log.stream));
}

describe('request log', () => {
  let redis: Redis;
  let service: RunningService;
  const log = captureLog();
  before(async () => {
    redis = testRedis();
    service = await startLogged({ LOG_LEVEL: 'info' }, log);
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  it('echoes a sane X-Request-Id and logs it; generates a UUID when none or a malformed one is sent', async () => {
    const ws = await newWorkspace(redis);
    const given = await call(service, 'GET', '/ping', { key: ws.apiKey, headers: { 'x-request-id': 'trace-42.abc' } });
    expect(given.headers.get('x-request-id')).to.equal('trace-42.abc');
    expect(log.requests().some((l) => l['requestId'] === 'trace-42.abc')).to.equal(true);
    const refused = await call(service, 'GET', '/ping', { headers: { 'x-request-id': 'trace-401' } });
    expect(refused.status).to.equal(401);
    expect(refused.headers.get('x-request-id')).to.equal('trace-401');

    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    for (const header of [undefined, 'has spaces in it', 'x'.repeat(129)]) {
      const res = await call(service, 'GET', '/ping', {
        key: ws.apiKey,
        headers: header === undefined ? {} : { 'x-request-id': header },
      });
      const id = res.headers.get('x-request-id');
      expect(id, String(header)).to.match(uuid);
      expect(log.requests().at(-1)!['requestId']).to.equal(id);
    }
  });

  it('neither echoes nor logs an X-Request-Id that holds something shaped like an API key', async () => {
    const ws = await newWorkspace(redis);
    const madeUp = `pds_${'Ab3'.repeat(14)}`;
    const before = log.lines.length;
    const ids: string[] = [];
    for (const [listener, key] of [[service, ws.apiKey], [{ baseUrl: service.opsUrl }, undefined]] as const) {
      for (const header of [ws.apiKey, madeUp, `trace-${ws.apiKey}`, `${madeUp}.1`]) {
        const res = await call(listener, 'GET', key ? '/ping' : '/healthz', { key, headers: { 'x-request-id': header } });
        expect(res.status).to.equal(200);
        const id = res.headers.get('x-request-id')!;
        expect(id, header).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        ids.push(id);
      }
    }
    expect(new Set(ids).size).to.equal(ids.length);
    const written = log.lines.slice(before).join('');
    expect(log.requests().some((l) => l['requestId'] === ids[0])).to.equal(true);
    for (const secret of [ws.apiKey, madeUp]) expect(written).not.to.include(secret.slice(4));
  });

  it('writes one line per request with route, status, latency and workspace id', async () => {
    const ws = await newWorkspace(redis);
    const before = log.requests().length;
    const res = await call(service, 'GET', '/data?userId=nobody', { key: ws.apiKey });
    expect(res.status).to.equal(404);
    const lines = log.requests().slice(before);
    expect(lines).to.have.length(1);
    const line = lines[0]!;
    expect(line).to.include({
      requestId: res.headers.get('x-request-id'),
      method: 'GET',
      route: '/api/v1/data',
      path: '/api/v1/data',
      status: 404,
      workspaceId: ws.workspaceId,
      level: 30,
    });
    expect(line['ms']).to.be.a('number').and.at.least(0);
  });

  it('never holds the API key or the admin token, whatever the request does with them', async () => {
    const ws = await newWorkspace(redis);
    const before = log.lines.length;
    await call(service, 'GET', '/ping', { key: ws.apiKey });
    await call(service, 'GET', `/data?userId=p&key=${ws.apiKey}`, { key: ws.apiKey });
    await call(service, 'POST', '/data/set', { key: ws.apiKey, body: { userId: 'p', key: 'k', value: ws.apiKey } });
    await call(service, 'POST', '/data/set', { key: ws.apiKey, rawBody: `{"broken": "${ws.apiKey}"`, headers: { 'content-type': 'application/json' } });
    const forged = ws.apiKey.slice(0, -4) + 'AAAA';
    expect((await call(service, 'GET', '/ping', { key: forged })).status).to.equal(401);
    const admin = { baseUrl: `${service.opsUrl}/admin/v1` };
    const created = await call(admin, 'POST', '/workspaces', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      body: { name: 'logged' },
    });
    expect(created.status).to.equal(201);

    const written = log.lines.slice(before).join('');
    expect(log.lines.length - before).to.be.at.least(6);
    expect(written).to.include(ws.workspaceId);
    for (const secret of [ws.apiKey, forged, ADMIN_TOKEN, created.body.data.apiKey as string]) {
      expect(written).not.to.include(secret);
      // Not even the random part, in case something trimmed the prefix.
      expect(written).not.to.include(secret.slice(8));
    }
  });

  it('logs successful probes and scrapes of the ops listener at debug, other ops requests at info', async () => {
    const before = log.requests().length;
    const ops = { baseUrl: service.opsUrl };
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await call(ops, 'GET', path)).status).to.equal(200);
    expect(log.requests().slice(before)).to.deep.equal([]);
    const denied = await call({ baseUrl: `${service.opsUrl}/admin/v1` }, 'GET', '/workspaces/ws_x');
    expect(denied.status).to.equal(401);
    expect(log.requests().slice(before).map((l) => l['route'])).to.deep.equal(['/admin/v1/workspaces/:id']);
  });

  it('follows LOG_LEVEL: no request lines above info', async () => {
    const quiet = captureLog();
    const warnOnly = await startLogged({ LOG_LEVEL: 'warn' }, quiet);
    try {
      const ws = await newWorkspace(redis);
      expect((await call(warnOnly, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
      expect(quiet.requests()).to.have.length(0);
    } finally {
      await warnOnly.close();
    }
  });
});
