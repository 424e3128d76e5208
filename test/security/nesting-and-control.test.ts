// Two holes of issue 38 walked through every input as an attacker would: JSON nested past the
// values' limit (MAX_VALUE_DEPTH) and names holding control characters (C0, DEL and the C1 range
// U+0080-U+009F), on every path that takes them: the data endpoints, both batch forms, sessions,
// messages, leaderboards, the admin API (and so the CLI and the console, which call the same
// operations), imports; plain, gzip and chunked bodies. Each bad input is 400 in the standard
// envelope, never a 500 and never written; the same input one level shallower, or with a
// character just outside the control ranges, is accepted, so every check can fail.
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import { ALL_ROUTES } from '../../src/openapi/document.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { ERASURE_ENV, platformSignature } from '../support/erasure.js';
import { freshIPv4, via } from '../support/gate.js';
import { call, fetchRecorded, newWorkspace, useService, type ApiResponse } from '../support/service.js';

const MAX_DEPTH = 32; // MAX_VALUE_DEPTH's default

/** A JSON value of exactly `levels` levels of arrays and objects, alternating, a number inside. */
function nested(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = i % 2 === 0 ? [v] : { n: v };
  return v;
}

/** A plain value for each required field of the routes' bodies. */
const SAMPLE: Readonly<Record<string, unknown>> = {
  userId: 'deep1',
  key: 'k',
  value: 1,
  message: 1,
  score: 1,
  ops: [],
  players: ['deep1'],
  owner: 'job',
  sessionId: 'none',
  name: 'deep',
  gameIds: [1],
  address: '192.0.2.1',
  entry: '192.0.2.1',
  reason: 'test',
  token: 'x',
  NotificationId: 'n-deep',
  EventType: 'RightToErasureRequest',
  EventPayload: { UserId: 1, GameIds: [1] },
};

/** The JSON text of `levels` arrays, built as text: deeper than any JavaScript value should be made. */
const deepText = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

describe('nesting and control characters on every input (issue 38, items 9 and 10)', function () {
  this.timeout(60_000);
  const h: { service: RunningService; redis: Redis } = useService({ ADMIN_TOKEN, ...ERASURE_ENV });
  let ws: CreatedWorkspace;
  let n = 0;
  const fresh = () => `u${Date.now().toString(36)}${n++}`;
  before(async () => {
    ws = await newWorkspace(h.redis, 'pro');
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) => call(h.service, 'POST', path, { key: ws.apiKey, body, headers });
  const expect400 = (res: ApiResponse, what: string, pattern?: RegExp) => {
    expect(res.status, `${what}: ${res.text}`).to.equal(400);
    expect(res.body, what).to.include({ success: false, code: 'INVALID_REQUEST' });
    if (pattern) expect(res.body.error, what).to.match(pattern);
  };

  describe('messages are held to the values\' nesting limit', () => {
    it('POST /messages: 32 levels are left, 33 and 100 are 400 and nothing waits', async () => {
      const userId = fresh();
      expect((await post('/messages', { userId, message: nested(MAX_DEPTH) })).status).to.equal(200);
      for (const levels of [MAX_DEPTH + 1, 100]) {
        expect400(await post('/messages', { userId, message: nested(levels) }), `message of ${levels}`, /"message".*nested deeper than 32 levels/);
      }
      const waiting = await call(h.service, 'GET', `/messages?userId=${userId}`, { key: ws.apiKey });
      expect(waiting.body.data.messages).to.have.length(1);
    });

    it('admin POST .../messages (the CLI and the console send through it): 33 levels are 400', async () => {
      const userId = fresh();
      const path = `/workspaces/${ws.workspaceId}/players/${userId}/messages`;
      expect((await adminCall(h.service, 'POST', path, { body: { message: nested(MAX_DEPTH) } })).status).to.equal(200);
      expect400(await adminCall(h.service, 'POST', path, { body: { message: nested(MAX_DEPTH + 1) } }), 'admin message', /nested deeper than 32 levels/);
      await expectAsync400(() => testOps(h.redis).messages.send(ws.workspaceId, userId, nested(100)));
    });

    it('a message nested as deep as the body limit allows is 400, not a 500 (the message was printed again before any check)', async () => {
      const userId = fresh();
      const body = `{"userId":"${userId}","message":${deepText(200_000)}}`;
      for (const [form, headers, raw] of [
        ['plain', {}, body],
        ['gzip', { 'content-encoding': 'gzip' }, gzipSync(body)],
      ] as const) {
        const res = await call(h.service, 'POST', '/messages', { key: ws.apiKey, rawBody: raw, headers: { 'content-type': 'application/json', ...headers } });
        expect400(res, `${form} body`);
      }
      const chunked = await chunkedPost(h.service.baseUrl + '/messages', body, { 'x-api-key': ws.apiKey });
      expect400(chunked, 'chunked body');
    });
  });

  describe('values: the same limit on every path, however deep the body', () => {
    const paths: Array<[string, (levels: unknown) => [string, unknown]]> = [
      ['set', (v) => ['/data/set', { userId: fresh(), key: 'k', value: v }]],
      ['batch, one player', (v) => ['/data/batch', { userId: fresh(), ops: [{ op: 'set', key: 'k', value: v }] }]],
      ['batch, many players', (v) => ['/data/batch', { players: [{ userId: fresh(), ops: [{ op: 'set', key: 'k', value: v }] }] }]],
    ];
    for (const [what, request] of paths) {
      it(`${what}: 33 levels and 200,000 levels are 400`, async () => {
        const [path, ok] = request(nested(MAX_DEPTH));
        expect((await post(path, ok)).status, what).to.equal(200);
        const [, bad] = request(nested(MAX_DEPTH + 1));
        expect400(await post(path, bad), what, /nested deeper than 32 levels/);
        const [, marker] = request(0);
        const text = JSON.stringify(marker).replace(/"value":0/, `"value":${deepText(200_000)}`);
        expect400(await call(h.service, 'POST', path, { key: ws.apiKey, rawBody: text, headers: { 'content-type': 'application/json' } }), `${what}, 200,000 levels`);
      });
    }

    it('admin PUT of a player value and an import line: 33 levels are 400 / refused', async () => {
      const userId = fresh();
      const path = `/workspaces/${ws.workspaceId}/players/${userId}`;
      expect400(await adminCall(h.service, 'PUT', path, { body: { key: 'k', value: nested(MAX_DEPTH + 1) } }), 'admin put');
      const summary = await testOps(h.redis).importWorkspace(ws.workspaceId, {
        stream: Readable.from([Buffer.from(`{"userId":"${userId}","version":1,"data":{"k":{"value":${JSON.stringify(nested(MAX_DEPTH + 1))},"updated_at":"2026-11-28T10:00:00.000Z"}}}\n`)]),
      });
      expect(JSON.stringify(summary)).to.match(/nested deeper than 32 levels/);
      expect(await h.redis.exists(`pds:p:{${ws.workspaceId}:${userId}}`)).to.equal(0);
    });
  });

  // 20,000 levels: past what JSON.stringify and any recursive walk can take (about 5,000 on
  // Node's default stack), small enough (40 KB) for every body limit, the webhook's included.
  describe('every route with a body, sent one nested 20,000 levels deep', () => {
    const fill = (path: string) =>
      path
        .replace(':id', ws.workspaceId)
        .replace(':board', 'coins')
        .replace(':userId', 'deep1')
        .replace(':keyId', 'key_none')
        .replace(':jobId', 'er_none')
        .replace(':address', '192.0.2.1')
        .replace(':entry', '192.0.2.1');
    it('answers 4xx, never 500, whole body and each field in turn', async () => {
      const routes = ALL_ROUTES.filter((r) => r.body !== undefined && r.method !== 'get');
      expect(routes.length, 'routes with a body').to.be.above(20);
      const tried: string[] = [];
      for (const route of routes) {
        const schema = route.body as { properties?: object; required?: string[] };
        const properties = Object.keys(schema.properties ?? {});
        const deep = deepText(20_000);
        // The other required fields filled, so that the deep one is what the route meets.
        const base = Object.fromEntries((schema.required ?? []).filter((f) => f in SAMPLE).map((f) => [f, SAMPLE[f]]));
        const bodies = [deep, ...properties.map((p) => JSON.stringify({ ...base, [p]: 'DEEP' }).replace('"DEEP"', deep))];
        for (const text of bodies) {
          const ndjson = route.bodyContentType !== undefined && route.bodyContentType !== 'application/json';
          const headers: Record<string, string> = { 'content-type': route.bodyContentType ?? 'application/json' };
          if (route.auth === 'apiKey') headers['x-api-key'] = ws.apiKey;
          if (route.auth === 'adminToken') headers['authorization'] = `Bearer ${ADMIN_TOKEN}`;
          if (route.auth === 'webhookSignature') headers['roblox-signature'] = platformSignature(text);
          const base = route.path.startsWith('/api/v1') ? h.service.baseUrl.replace(/\/api\/v1$/, '') : h.service.opsUrl;
          const res = await fetchRecorded(base + fill(route.path), route.method.toUpperCase(), headers, ndjson ? `${text}\n` : text);
          tried.push(`${route.method} ${route.path} ${res.status}`);
          expect(res.status, `${route.method} ${route.path} ${text.slice(0, 20)}: ${res.text.slice(0, 200)}`).to.be.below(500);
        }
      }
      expect(tried.length).to.be.above(60);
    });
  });

  describe('key names and other names hold no control characters, C1 included', () => {
    // U+0085 (NEXT LINE), the ends of the C1 range, DEL and a C0 character; U+00A0 and U+007E are just outside.
    const CONTROL = ['\u0085', '\u0080', '\u009f', '\u007f', '\u0001'];
    const code = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

    const publicPaths: Array<[string, (key: string) => [string, string, unknown]]> = [
      ['GET /data ?key', (k) => ['GET', `/data?userId=${fresh()}&key=${encodeURIComponent(k)}`, undefined]],
      ['set', (k) => ['POST', '/data/set', { userId: fresh(), key: k, value: 1 }]],
      ['increment', (k) => ['POST', '/data/increment', { userId: fresh(), key: k }]],
      ['delete', (k) => ['POST', '/data/delete', { userId: fresh(), key: k }]],
      ['batch, one player', (k) => ['POST', '/data/batch', { userId: fresh(), ops: [{ op: 'set', key: k, value: 1 }] }]],
      ['batch, many players', (k) => ['POST', '/data/batch', { players: [{ userId: fresh(), ops: [{ op: 'increment', key: k }] }] }]],
      ['session owner', (k) => ['POST', '/sessions/acquire', { userId: fresh(), owner: `job${k}` }]],
      ['many-player acquire owner', (k) => ['POST', '/sessions/acquire', { players: [fresh()], owner: `job${k}` }]],
    ];
    for (const [what, request] of publicPaths) {
      it(`${what}: 400 for each control character, accepted just outside the ranges`, async () => {
        for (const c of CONTROL) {
          const [method, path, body] = request(`a${c}b`);
          expect400(await call(h.service, method, path, { key: ws.apiKey, body }), `${what} with ${code(c)}`);
        }
        for (const c of ['\u00a0', '~']) {
          const [method, path, body] = request(`a${c}b`);
          expect((await call(h.service, method, path, { key: ws.apiKey, body })).status, `${what} with ${code(c)}`).to.be.oneOf([200, 404]);
        }
      });
    }

    it('a gzip and a chunked body are judged the same', async () => {
      const body = JSON.stringify({ userId: fresh(), key: 'a\u0085b', value: 1 });
      const gz = await call(h.service, 'POST', '/data/set', { key: ws.apiKey, rawBody: gzipSync(body), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
      expect400(gz, 'gzip');
      expect400(await chunkedPost(h.service.baseUrl + '/data/set', body, { 'x-api-key': ws.apiKey }), 'chunked');
    });

    it('the admin side: a player key (body and query), a board\'s followed key, a workspace name, a key label, an import line', async () => {
      const userId = fresh();
      const player = `/workspaces/${ws.workspaceId}/players/${userId}`;
      expect400(await adminCall(h.service, 'PUT', player, { body: { key: 'a\u0085b', value: 1 } }), 'admin put');
      expect400(await adminCall(h.service, 'GET', `${player}?key=${encodeURIComponent('a\u0085b')}`), 'admin get ?key');
      expect400(await adminCall(h.service, 'DELETE', `${player}?key=${encodeURIComponent('a\u009fb')}`), 'admin delete ?key');
      const ops = testOps(h.redis);
      await expectAsync400(() => ops.setPlayerValue(ws.workspaceId, userId, 'a\u0085b', 1));
      expect((await ops.setPlayerValue(ws.workspaceId, userId, 'a\u00a0b', 1)).key).to.equal('a\u00a0b');
      await expectAsync400(() => ops.leaderboards.follow(ws.workspaceId, 'coins', 'a\u0085b'));
      expect400(await adminCall(h.service, 'POST', '/workspaces', { body: { name: 'shop\u0085', plan: 'free' } }), 'workspace name');
      expect400(await adminCall(h.service, 'POST', `/workspaces/${ws.workspaceId}/keys`, { body: { label: 'ci\u0085' } }), 'key label');
      const line = `{"userId":"${fresh()}","version":1,"data":{"a\\u0085b":{"value":1,"updated_at":"2026-11-28T10:00:00.000Z"}}}\n`;
      const summary = await ops.importWorkspace(ws.workspaceId, { stream: Readable.from([Buffer.from(line)]) });
      expect(JSON.stringify(summary)).to.match(/without control characters/);
    });
  });
});

describe('control characters a violator sends, as the gate keeps them (issue 38, the walk)', function () {
  this.timeout(30_000);
  const h: { service: RunningService; redis: Redis } = useService({ GATE_MODE: 'enforce', TRUST_PROXY_HOPS: '1', GATE_BAN_MAX_PER_MINUTE: '1000' });

  it('writes out C1 control characters of a header value (bytes 0x80-0x9F, read as latin1) in a ban\'s evidence, which the CLI prints', async () => {
    const address = freshIPv4();
    // U+009B is CSI to a terminal that takes C1 controls: "CSI 2 J" clears the screen.
    const userAgent = 'curl/8\u009b2J\u0085x';
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${h.service.baseUrl}/ping`);
      const req = request({ host: url.hostname, port: url.port, path: url.pathname, headers: via(address, { 'user-agent': userAgent }) }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).to.equal(403);
    const record = JSON.parse((await h.redis.hget(keys.bans(), address))!) as { evidence: { userAgent: string; headers: Record<string, string> } };
    expect(record.evidence.userAgent).to.equal('curl/8\\u009b2J\\u0085x');
    expect(JSON.stringify(record)).to.not.match(/[\u0080-\u009f]/);
    await testOps(h.redis).bans.removeBan(address);
  });
});

async function expectAsync400(run: () => Promise<unknown>): Promise<void> {
  let caught: unknown;
  try {
    await run();
  } catch (err) {
    caught = err;
  }
  expect(caught, 'refused').to.be.instanceOf(Error);
  expect((caught as { status?: number }).status).to.equal(400);
}

/** POSTs `body` chunked (no Content-Length), in pieces of 16 KiB. */
function chunkedPost(url: string, body: string, headers: Record<string, string>): Promise<ApiResponse> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: new Headers(), body: JSON.parse(text) as unknown, text }));
      },
    );
    req.on('error', reject);
    const bytes = Buffer.from(body);
    for (let i = 0; i < bytes.length; i += 16_384) req.write(bytes.subarray(i, i + 16_384));
    req.end();
  });
}
