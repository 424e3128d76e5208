// MAX_BODY_BYTES at its edge, on the public API and on the admin API: a body of exactly the
// limit is read and applied, one byte more is 413 and writes nothing. Each way a body can come
// is tried, since each is counted by different code (json-body.ts): a Content-Length body that
// arrives with its headers, one that arrives later, a chunked body (no length declared), and a
// gzip body (the limit counts the decoded bytes).
import { request } from 'node:http';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { CreatedWorkspace } from '../../src/admin/operations.js';
import type { RunningService } from '../../src/server.js';
import { ADMIN_TOKEN } from '../support/admin.js';
import { call, fetchRecorded, newWorkspace, startTestService, testRedis } from '../support/service.js';

const LIMIT = 4096;

/** A JSON body of exactly `bytes` bytes: `fields` with a string `value` padded to fit. */
function bodyOfLength(bytes: number, fields: Record<string, unknown>): string {
  const empty = JSON.stringify({ ...fields, value: '' });
  const body = JSON.stringify({ ...fields, value: 'x'.repeat(bytes - Buffer.byteLength(empty)) });
  expect(Buffer.byteLength(body)).to.equal(bytes);
  return body;
}

interface Answer {
  status: number;
  body: any;
}

/** Sends `chunks` as a chunked body (no Content-Length), one write each. */
function sendChunked(url: string, method: string, headers: Record<string, string>, chunks: Buffer[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    // The server may answer 413 and close before the last chunk is written.
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}

/** Sends the headers (with Content-Length), then the body 50 ms later: read by the streaming path. */
function sendLate(port: number, method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d.toString('utf8')));
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (!status) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      resolve({ status: Number(status[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) });
    });
    socket.on('error', reject);
    const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': String(body.length), connection: 'close' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\n${head}\r\n`);
    setTimeout(() => socket.write(body), 50);
  });
}

function expectTooLarge(res: Answer, how: string) {
  expect(res.status, how).to.equal(413);
  expect(res.body, how).to.deep.equal({ success: false, error: `Request body is larger than ${LIMIT} bytes`, code: 'PAYLOAD_TOO_LARGE' });
}

describe('MAX_BODY_BYTES: exactly the limit passes, one byte more is 413', () => {
  let service: RunningService;
  let redis: Redis;
  let ws: CreatedWorkspace;
  before(async () => {
    service = await startTestService({ MAX_BODY_BYTES: String(LIMIT), ADMIN_TOKEN });
    redis = testRedis();
    ws = await newWorkspace(redis, 'pro', 'Body Limit');
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  const publicUrl = () => `${service.baseUrl}/data/set`;
  const publicHeaders = () => ({ 'x-api-key': ws.apiKey });
  const adminPath = (userId: string) => `/admin/v1/workspaces/${ws.workspaceId}/players/${userId}`;
  const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const storedKeys = async (userId: string) => {
    const res = await call(service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    return res.status === 404 ? [] : Object.keys(res.body.data).sort();
  };

  /** Every way of sending one body to one route; resolves with each answer, named. */
  async function sendEveryWay(
    route: { url: string; method: string; path: string; port: number; headers: Record<string, string> },
    body: string,
  ): Promise<Array<[string, Answer]>> {
    const bytes = Buffer.from(body);
    const half = Math.floor(bytes.length / 2);
    const headers = { ...route.headers, 'content-type': 'application/json' };
    const answers: Array<[string, Answer]> = [];
    answers.push(['Content-Length, with the headers', await fetchRecorded(route.url, route.method, headers, body)]);
    answers.push(['Content-Length, after the headers', await sendLate(route.port, route.method, route.path, route.headers, bytes)]);
    answers.push(['chunked', await sendChunked(route.url, route.method, route.headers, [bytes.subarray(0, half), bytes.subarray(half)])]);
    answers.push(['gzip (decoded size)', await fetchRecorded(route.url, route.method, { ...headers, 'content-encoding': 'gzip' }, gzipSync(bytes))]);
    return answers;
  }

  it('public API (POST /data/set): each way a body comes', async () => {
    const route = {
      url: publicUrl(),
      method: 'POST',
      path: new URL(publicUrl()).pathname,
      port: Number(new URL(publicUrl()).port),
      headers: publicHeaders(),
    };
    for (const [how, res] of await sendEveryWay(route, bodyOfLength(LIMIT, { userId: 'edge', key: 'fits' }))) {
      expect(res.status, how).to.equal(200);
      expect(res.body.success, how).to.equal(true);
    }
    for (const [how, res] of await sendEveryWay(route, bodyOfLength(LIMIT + 1, { userId: 'edge', key: 'over' }))) {
      expectTooLarge(res, how);
    }
    expect(await storedKeys('edge')).to.deep.equal(['fits']);
  });

  it('admin API (PUT /admin/v1/workspaces/:id/players/:userId): each way a body comes', async () => {
    const url = `${service.opsUrl}${adminPath('admin-edge')}`;
    const route = { url, method: 'PUT', path: adminPath('admin-edge'), port: Number(new URL(url).port), headers: adminHeaders };
    for (const [how, res] of await sendEveryWay(route, bodyOfLength(LIMIT, { key: 'fits' }))) {
      expect(res.status, how).to.equal(200);
      expect(res.body.success, how).to.equal(true);
    }
    for (const [how, res] of await sendEveryWay(route, bodyOfLength(LIMIT + 1, { key: 'over' }))) {
      expectTooLarge(res, how);
    }
    expect(await storedKeys('admin-edge')).to.deep.equal(['fits']);
  });
});
