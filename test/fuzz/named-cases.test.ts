// Hostile inputs by name: prototype keys, deep and wide values, huge numbers, invalid UTF-8,
// long headers and query strings, slow clients and many connections from one address.
import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { send } from '../support/fuzz.js';
import { call, newWorkspace, startTestService, testRedis } from '../support/service.js';

function raw(service: RunningService, key: string, path: string, body: string | Buffer) {
  return call(service, 'POST', path, { key, rawBody: body, headers: { 'content-type': 'application/json' } });
}

/** Opens a socket and resolves with everything the server sent once it closes it. */
function trickle(port: number, chunks: string[], everyMs: number): Promise<{ text: string; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ text, ms: Date.now() - started });
    });
    socket.on('error', () => {});
    socket.on('connect', () => {
      let i = 0;
      timer = setInterval(() => {
        if (i < chunks.length && !socket.destroyed) socket.write(chunks[i++]!);
      }, everyMs);
    });
  });
}

function envelopeOf(httpText: string): unknown {
  return JSON.parse(httpText.slice(httpText.indexOf('\r\n\r\n') + 4));
}

describe('named hostile inputs', function () {
  this.timeout(60_000);
  let service: RunningService;
  let redis: Redis;
  let key: string;

  before(async () => {
    service = await startTestService({ HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000', RATE_LIMIT_PRO: '1000000' });
    redis = testRedis();
    key = (await newWorkspace(redis, 'pro')).apiKey;
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
  });

  describe('__proto__, constructor and prototype', () => {
    const value = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":[1,{"__proto__":null}]}';

    it('round-trip as plain data, as data keys and inside values, and pollute nothing', async () => {
      for (const name of ['__proto__', 'constructor', 'prototype']) {
        const set = await raw(service, key, '/data/set', `{"userId":"${name}","key":"${name}","value":${value}}`);
        expect(set.status, set.text).to.equal(200);
        const one = await call(service, 'GET', `/data?userId=${name}&key=${name}`, { key });
        expect(one.status).to.equal(200);
        // Compared as text: the stored JSON is exactly what was sent, own "__proto__" member included.
        expect(one.text).to.include(`"value":${value}`);
        const all = await call(service, 'GET', `/data?userId=${name}`, { key });
        expect(all.text).to.equal(`{"success":true,"data":{"${name}":${value}},"version":1}`);
        expect(Object.keys(all.body.data)).to.deep.equal([name]);
        const inc = await call(service, 'POST', '/data/increment', { key, body: JSON.parse(`{"userId":"${name}","key":"n_${name}","amount":2}`) });
        expect(inc.body).to.deep.equal({ success: true, value: 2, version: 2 });
      }
      const query = await call(service, 'GET', '/data?userId=1&__proto__=x&constructor=y&prototype=z', { key });
      expect(query.status).to.be.oneOf([400, 404]);
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
      expect(Object.prototype).to.not.have.property('polluted');
      expect(Object.getOwnPropertyNames(Object.prototype)).to.not.include('polluted');
    });

    it('refuses "__proto__" as a body member that is not a field, without polluting', async () => {
      const res = await raw(service, key, '/data/set', '{"userId":"1","key":"k","value":1,"__proto__":{"polluted":true}}');
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('Unknown field "__proto__" in body');
      expect(Object.prototype).to.not.have.property('polluted');
    });
  });

  describe('deep and wide values', () => {
    it('takes a value nested to the limit and refuses one level deeper, naming the limit', async () => {
      const nested = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);
      expect((await raw(service, key, '/data/set', `{"userId":"1","key":"d","value":${nested(32)}}`)).status).to.equal(200);
      const deeper = await raw(service, key, '/data/set', `{"userId":"1","key":"d","value":${nested(33)}}`);
      expect(deeper.status).to.equal(400);
      expect(deeper.body.error).to.match(/deeper than 32 levels/);
    });

    it('refuses a 200,000-level nesting without crashing', async () => {
      const n = 200_000;
      const res = await raw(service, key, '/data/set', `{"userId":"1","key":"d","value":${'['.repeat(n)}${']'.repeat(n)}}`);
      expect(res.status).to.equal(400);
      expect(res.body.success).to.equal(false);
      const objects = await raw(service, key, '/data/set', `{"userId":"1","key":"d","value":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`);
      expect(objects.status).to.be.oneOf([400, 413]);
    });

    it('round-trips a very wide object and array within the body limit, and refuses a body over it with 413', async () => {
      const wide = `{${Array.from({ length: 40_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
      expect((await raw(service, key, '/data/set', `{"userId":"w","key":"wide","value":${wide}}`)).status).to.equal(200);
      const back = await call(service, 'GET', '/data?userId=w&key=wide', { key });
      expect(Object.keys(back.body.data.value)).to.have.length(40_000);
      const array = `[${Array.from({ length: 100_000 }, () => '1').join(',')}]`;
      expect((await raw(service, key, '/data/set', `{"userId":"w","key":"arr","value":${array}}`)).status).to.equal(200);
      const tooBig = await raw(service, key, '/data/set', `{"userId":"w","key":"big","value":"${'x'.repeat(1_100_000)}"}`);
      expect(tooBig.status).to.equal(413);
      expect(tooBig.body).to.deep.equal({ success: false, error: 'Request body is larger than 1048576 bytes', code: 'PAYLOAD_TOO_LARGE' });
    });
  });

  describe('numbers', () => {
    it('refuses numbers JSON cannot carry, keeps "NaN" and "Infinity" as the strings they are', async () => {
      for (const n of ['1e309', '-1e309', '1' + '0'.repeat(400)]) {
        const res = await raw(service, key, '/data/set', `{"userId":"n","key":"k","value":${n}}`);
        expect(res.status, n).to.equal(400);
        expect(res.body.error).to.match(/too large/);
        const inc = await raw(service, key, '/data/increment', `{"userId":"n","key":"k","amount":${n}}`);
        expect(inc.status, n).to.be.oneOf([400, 409]);
      }
      for (const s of ['NaN', 'Infinity', '-Infinity', '1e309']) {
        expect((await call(service, 'POST', '/data/set', { key, body: { userId: 'n', key: s, value: s } })).status).to.equal(200);
        expect((await call(service, 'GET', `/data?userId=n&key=${s}`, { key })).body.data.value).to.equal(s);
        const inc = await call(service, 'POST', '/data/increment', { key, body: { userId: 'n', key: 'c', amount: s } });
        expect(inc.status).to.equal(400);
        expect(inc.body.error).to.equal('Invalid field "amount" in body: must be a number');
      }
    });

    it('keeps the closest double of a 30-digit number, and refuses an increment past the finite range', async () => {
      await raw(service, key, '/data/set', '{"userId":"n","key":"big","value":123456789012345678901234567890}');
      expect((await call(service, 'GET', '/data?userId=n&key=big', { key })).body.data.value).to.equal(123456789012345678901234567890);
      expect((await call(service, 'POST', '/data/increment', { key, body: { userId: 'n', key: 'huge', amount: 1e308 } })).status).to.equal(200);
      const over = await call(service, 'POST', '/data/increment', { key, body: { userId: 'n', key: 'huge', amount: 1e308 } });
      expect(over.status).to.equal(409);
      expect((await call(service, 'GET', '/data?userId=n&key=huge', { key })).body.data.value).to.equal(1e308);
    });
  });

  it('answers invalid UTF-8 with a 4xx or stores it as U+FFFD, never a 5xx or a broken entry', async () => {
    for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf]]) {
      const body = Buffer.concat([Buffer.from('{"userId":"u8","key":"k","value":"a'), Buffer.from(bytes), Buffer.from('b"}')]);
      const res = await raw(service, key, '/data/set', body);
      expect(res.status, String(bytes)).to.be.oneOf([200, 400]);
      if (res.status === 200) {
        const back = await call(service, 'GET', '/data?userId=u8&key=k', { key });
        expect(back.body.data.value).to.match(/^a\uFFFD+b$/);
      }
    }
    const inKey = await send(service.baseUrl.replace(/\/api\/v1$/, ''), {
      method: 'GET',
      path: '/api/v1/data?userId=u8&key=%FF%FE',
      headers: { 'x-api-key': key },
    });
    expect(inKey.status).to.be.oneOf([400, 404]);
    expect(JSON.parse(inKey.text).success).to.equal(false);
  });

  it('answers very long headers with 431 and very long query strings with a 4xx, in the envelope', async () => {
    const base = service.baseUrl.replace(/\/api\/v1$/, '');
    const header = await send(base, { method: 'GET', path: '/api/v1/ping', headers: { 'x-api-key': key, 'x-long': 'a'.repeat(20_000) } });
    expect(header.status).to.equal(431);
    expect(JSON.parse(header.text)).to.deep.equal({ success: false, error: 'Request headers are too large', code: 'REQUEST_HEADERS_TOO_LARGE' });
    const many = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`x-h${i}`, 'v'.repeat(10)]));
    const manyHeaders = await send(base, { method: 'GET', path: '/api/v1/ping', headers: { 'x-api-key': key, ...many } });
    expect(manyHeaders.status, manyHeaders.text).to.equal(431);
    const query = await send(base, { method: 'GET', path: `/api/v1/data?userId=1&key=${'k'.repeat(200_000)}`, headers: { 'x-api-key': key } });
    expect(query.status).to.equal(431);
    expect(JSON.parse(query.text).success).to.equal(false);
    const longQuery = await send(base, { method: 'GET', path: `/api/v1/data?userId=1&key=${'k'.repeat(12_000)}`, headers: { 'x-api-key': key } });
    expect(longQuery.status).to.equal(400);
    const longKey = await send(base, { method: 'GET', path: `/api/v1/data?userId=1&key=${'k'.repeat(5000)}`, headers: { 'x-api-key': key } });
    expect(longKey.status).to.equal(400);
    expect(JSON.parse(longKey.text).error).to.match(/Invalid field "key" in query/);
  });

  describe('slow clients', () => {
    it('cuts off a request whose headers trickle in, with 408, after HTTP_HEADERS_TIMEOUT_MS', async () => {
      const head = `GET /api/v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\n`;
      const res = await trickle(service.port, [...head.split(''), '\r\n'], 100);
      expect(res.text).to.match(/^HTTP\/1\.1 408 /);
      expect(envelopeOf(res.text)).to.deep.equal({ success: false, error: 'Request was not received in time', code: 'REQUEST_TIMEOUT' });
      expect(res.ms).to.be.within(900, 4000);
    });

    it('cuts off a request whose body trickles in after HTTP_REQUEST_TIMEOUT_MS, and stores nothing', async () => {
      const body = '{"userId":"slow","key":"k","value":"never"}';
      const head = `POST /api/v1/data/set HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`;
      const res = await trickle(service.port, [head, ...body.split('')], 150);
      expect(res.text).to.match(/^HTTP\/1\.1 408 /);
      expect(res.ms).to.be.within(1900, 5000);
      expect((await call(service, 'GET', '/data?userId=slow', { key })).status).to.equal(404);
    });
  });

  it('serves many connections from one address, and closes the idle ones', async () => {
    const idle: Socket[] = await Promise.all(
      Array.from({ length: 300 }, () => new Promise<Socket>((resolve) => {
        const s = connect(service.port, '127.0.0.1', () => resolve(s));
        s.on('error', () => {});
      })),
    );
    const answers = await Promise.all(Array.from({ length: 300 }, () => call(service, 'GET', '/ping', { key })));
    expect(answers.every((a) => a.status === 200)).to.equal(true);
    // Connections that never send a byte are closed after HTTP_HEADERS_TIMEOUT_MS (1 s here).
    await new Promise((r) => setTimeout(r, 2000));
    expect(idle.filter((s) => !s.destroyed && s.readyState === 'open')).to.have.length(0);
    for (const s of idle) s.destroy();
    expect((await call(service, 'GET', '/ping', { key })).status).to.equal(200);
  });
});
