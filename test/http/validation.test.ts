// Bad input: every refusal is a 4xx in the standard envelope, names what is wrong, and writes nothing.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { keys } from '../../src/store/keys.js';
import { call, client, newWorkspace, useService, startTestService } from '../support/service.js';

const CODE_OF_STATUS: Record<number, string> = {
  400: 'INVALID_REQUEST',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

function expectEnvelope(res: { status: number; body: any }, status: number, message?: RegExp) {
  expect(res.status).to.equal(status);
  expect(res.body).to.be.an('object');
  expect(Object.keys(res.body).sort()).to.deep.equal(['code', 'error', 'success']);
  expect(res.body.code).to.equal(CODE_OF_STATUS[status]);
  expect(res.body.success).to.equal(false);
  expect(res.body.error).to.be.a('string').and.not.be.empty;
  if (message) expect(res.body.error).to.match(message);
}

/** Writes each part on one socket, `gapMs` apart, and resolves with all the server sent once it closes. */
function overTheWire(port: number, parts: Array<string | Uint8Array>, gapMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, gapMs));
        socket.write(part);
      }
    });
  });
}

function setRequest(apiKey: string, body: string, last = false): string {
  const connection = last ? 'close' : 'keep-alive';
  return `POST /api/v1/data/set HTTP/1.1\r\nHost: x\r\nx-api-key: ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: ${connection}\r\n\r\n${body}`;
}

describe('request validation and error envelope', () => {
  const t = useService();
  let api: ReturnType<typeof client>;
  let key: string;
  let workspaceId: string;

  beforeEach(async () => {
    const ws = await newWorkspace(t.redis);
    key = ws.apiKey;
    workspaceId = ws.workspaceId;
    api = client(t.service, key);
  });

  it('userId: refuses negatives, fractions, unsafe integers, bad characters, empty and long strings', async () => {
    const bad = [-1, 1.5, 2 ** 53, 1e300, '', 'a b', 'a/b', 'x{y}', 'é', 'a'.repeat(65), null, true, [1], { id: 1 }];
    for (const userId of bad) {
      expectEnvelope(await api.post('/data/set', { userId, key: 'k', value: 1 }), 400, /userId/);
    }
    expectEnvelope(await api.get('/data?userId=a%20b'), 400, /userId/);
    expectEnvelope(await api.get('/data?userId=' + 'a'.repeat(65)), 400, /userId/);
    expectEnvelope(await api.get('/data?userId=1&userId=2'), 400, /userId/);
    expect(await t.redis.keys(keys.playerPattern(workspaceId))).to.deep.equal([]);
  });

  it('accepts the largest safe integer and 64-character string ids', async () => {
    expect((await api.post('/data/set', { userId: Number.MAX_SAFE_INTEGER, key: 'k', value: 1 })).status).to.equal(200);
    expect((await api.post('/data/set', { userId: 'a'.repeat(64), key: 'k', value: 1 })).status).to.equal(200);
    expect((await api.post('/data/set', { userId: 0, key: 'k', value: 1 })).status).to.equal(200);
  });

  it('GET /data without userId is 400', async () => {
    expectEnvelope(await api.get('/data'), 400, /Missing field "userId" in query/);
    expectEnvelope(await api.get('/data?key=coins'), 400, /userId/);
  });

  it('key: refuses empty, too long (> 128) and control characters', async () => {
    for (const k of ['', 'x'.repeat(129), 'a\nb', 'tab\there', '\u0000', 'del\u007f', 5, null, ['a']]) {
      expectEnvelope(await api.post('/data/set', { userId: 1, key: k, value: 1 }), 400, /key/);
      expectEnvelope(await api.post('/data/increment', { userId: 1, key: k }), 400, /key/);
      expectEnvelope(await api.post('/data/delete', { userId: 1, key: k }), 400, /key/);
    }
    expectEnvelope(await api.get('/data?userId=1&key='), 400, /key/);
    expectEnvelope(await api.get(`/data?userId=1&key=${'x'.repeat(129)}`), 400, /key/);
  });

  it('value: missing or null is 400', async () => {
    expectEnvelope(await api.post('/data/set', { userId: 1, key: 'k' }), 400, /Missing field "value"/);
    expectEnvelope(await api.post('/data/set', { userId: 1, key: 'k', value: null }), 400, /value/);
  });

  it('value: nesting deeper than 32 levels is 400; 32 is fine; the limit is configurable', async () => {
    const nest = (depth: number): unknown => (depth === 0 ? 1 : [nest(depth - 1)]);
    expect((await api.post('/data/set', { userId: 1, key: 'deep', value: nest(32) })).status).to.equal(200);
    expectEnvelope(await api.post('/data/set', { userId: 1, key: 'deeper', value: nest(33) }), 400, /nested deeper than 32/);
    const objectNest = (depth: number): unknown => (depth === 0 ? 'x' : { a: objectNest(depth - 1) });
    expectEnvelope(await api.post('/data/set', { userId: 1, key: 'deeper', value: objectNest(40) }), 400, /nested/);
    const shallow = await startTestService({ MAX_VALUE_DEPTH: '2' });
    try {
      const c = client(shallow, key);
      expect((await c.post('/data/set', { userId: 1, key: 'k', value: [[1]] })).status).to.equal(200);
      expectEnvelope(await c.post('/data/set', { userId: 1, key: 'k', value: [[[1]]] }), 400, /deeper than 2/);
    } finally {
      await shallow.close();
    }
  });

  it('value: a number JSON cannot hold (1e400) is 400, not stored as null', async () => {
    const res = await call(t.service, 'POST', '/data/set', {
      key,
      rawBody: '{"userId":1,"key":"huge","value":1e400}',
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(res, 400, /too large/);
    const amount = await call(t.service, 'POST', '/data/increment', {
      key,
      rawBody: '{"userId":1,"key":"n","amount":1e400}',
      headers: { 'content-type': 'application/json' },
    });
    expectEnvelope(amount, 400, /amount/);
    expect((await api.get('/data?userId=1')).status).to.equal(404);
  });

  it('malformed JSON is 400; a body that is not an object is 400', async () => {
    for (const rawBody of ['{bad', '{"userId":1,', '[1,2]', '"str"', '12', 'null']) {
      const res = await call(t.service, 'POST', '/data/set', { key, rawBody, headers: { 'content-type': 'application/json' } });
      expectEnvelope(res, 400);
    }
  });

  it('an empty body is 400; a non-JSON content type is 415', async () => {
    expectEnvelope(await call(t.service, 'POST', '/data/set', { key, headers: { 'content-type': 'application/json' } }), 400);
    expectEnvelope(await call(t.service, 'POST', '/data/set', { key }), 400);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await call(t.service, 'POST', '/data/set', {
        key,
        rawBody: '{"userId":1,"key":"k","value":1}',
        headers: { 'content-type': type },
      });
      expectEnvelope(res, 415, /application\/json/);
    }
    const noType = await call(t.service, 'POST', '/data/set', { key, rawBody: '{"userId":1,"key":"k","value":1}' });
    expectEnvelope(noType, 415);
    expect((await api.get('/data?userId=1')).status).to.equal(404);
  });

  it('accepts application/json with a charset', async () => {
    const res = await call(t.service, 'POST', '/data/set', {
      key,
      rawBody: '{"userId":1,"key":"k","value":1}',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).to.equal(200);
  });

  it('reads a body with a byte order mark, a gzip body and a chunked body; a JSON scalar is 400', async () => {
    const text = '{"userId":1,"key":"bom","value":1}';
    const bom = await call(t.service, 'POST', '/data/set', {
      key,
      rawBody: '\uFEFF' + text,
      headers: { 'content-type': 'application/json' },
    });
    expect(bom.status).to.equal(200);
    const gzipped = await call(t.service, 'POST', '/data/set', {
      key,
      rawBody: gzipSync('{"userId":1,"key":"gz","value":2}'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    expect(gzipped.status).to.equal(200);
    const chunked = await fetch(`${t.service.baseUrl}/data/set`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: new Blob(['{"userId":1,"key":"chunked","value":3}']).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).to.equal(200);
    for (const scalar of ['1', '"x"', 'null', '{"userId":1', '{"userId":1}x']) {
      const res = await call(t.service, 'POST', '/data/set', {
        key,
        rawBody: scalar,
        headers: { 'content-type': 'application/json' },
      });
      expectEnvelope(res, 400);
    }
    expect(Object.keys((await api.get('/data?userId=1')).body.data).sort()).to.deep.equal(['bom', 'chunked', 'gz']);
  });

  it('reads a body however it arrives: with its headers, after them, in pieces, or pipelined', async () => {
    const body = (k: string, v: unknown) => JSON.stringify({ userId: 1, key: k, value: v });
    const port = Number(new URL(t.service.baseUrl).port);
    // Headers and body in one write: the body is in the buffer by the time it is read.
    const together = await overTheWire(port, [setRequest(key, body('together', 'é'.repeat(600)), true)], 0);
    // The body 50 ms after the headers, then split in two mid-character, 50 ms apart.
    const split = setRequest(key, body('split', 'é'.repeat(600)), true);
    const at = split.indexOf('\r\n\r\n') + 4;
    const cut = at + Buffer.byteLength(split.slice(at)) / 2 - 1;
    const bytes = Buffer.from(split);
    const pieces = await overTheWire(port, [bytes.subarray(0, at), bytes.subarray(at, cut), bytes.subarray(cut)], 50);
    // Three requests in one write: each takes its own body and no more.
    const pipelined = await overTheWire(port, [setRequest(key, body('p1', 1)) + setRequest(key, body('p2', [2])) + setRequest(key, body('p3', { v: 3 }), true)], 0);
    expect(together).to.match(/^HTTP\/1\.1 200 /);
    expect(pieces).to.match(/^HTTP\/1\.1 200 /);
    expect(pipelined.match(/HTTP\/1\.1 200 /g)).to.have.length(3);
    expect((await api.get('/data?userId=1')).body.data).to.deep.equal({
      together: 'é'.repeat(600),
      split: 'é'.repeat(600),
      p1: 1,
      p2: [2],
      p3: { v: 3 },
    });
  });

  it('a body over the limit (1 MiB by default) is 413 and writes nothing; the limit is configurable', async () => {
    const big = 'x'.repeat(1024 * 1024);
    expectEnvelope(await api.post('/data/set', { userId: 1, key: 'big', value: big }), 413, /1048576 bytes/);
    expect((await api.post('/data/set', { userId: 1, key: 'ok', value: 'x'.repeat(1000 * 1000) })).status).to.equal(200);
    const small = await startTestService({ MAX_BODY_BYTES: '2048' });
    try {
      const c = client(small, key);
      expectEnvelope(await c.post('/data/set', { userId: 1, key: 'k', value: 'y'.repeat(3000) }), 413, /2048 bytes/);
    } finally {
      await small.close();
    }
    expect(Object.keys((await api.get('/data?userId=1')).body.data)).to.deep.equal(['ok']);
  });

  it('unknown routes are 404 and wrong methods 405, in the envelope', async () => {
    expectEnvelope(await api.get('/nothing-here'), 404, /No such endpoint/);
    expectEnvelope(await call(t.service, 'GET', '/../../etc/passwd'), 404);
    expectEnvelope(await api.get('/data/set'), 405);
    expectEnvelope(await api.post('/ping', {}), 405);
  });

  it('delete: unknown fields are refused instead of deleting everything by mistake', async () => {
    await api.post('/data/set', { userId: 1, key: 'k', value: 1 });
    expectEnvelope(await api.post('/data/delete', { userId: 1, keys: ['k'] }), 400, /Unknown field "keys"/);
    expect((await api.get('/data?userId=1&key=k')).status).to.equal(200);
  });
});
