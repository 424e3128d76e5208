// The admin API's workspace export (GET .../export, NDJSON streamed) and import (POST
// .../import, an NDJSON upload read as it arrives, answered with a summary and per-line errors).
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/server.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { LogCapture } from '../support/log-capture.js';
import { call, fetchRecorded, startTestService, testConfig, testRedis } from '../support/service.js';

describe('admin API: workspace export and import', () => {
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

  const upload = (id: string, body: string, query = '', type = 'application/x-ndjson') =>
    fetchRecorded(`${service.opsUrl}/admin/v1/workspaces/${id}/import${query}`, 'POST', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': type }, body);

  it('exports every player as NDJSON and imports it into another workspace', async () => {
    const ops = testOps(redis);
    const source = (await ops.createWorkspace({ name: 'source' })).workspaceId;
    for (let i = 0; i < 25; i++) await ops.setPlayerValue(source, String(i), 'coins', i);
    const res = await adminCall(service, 'GET', `/workspaces/${source}/export`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    expect(res.headers.get('content-disposition')).to.include(`${source}.ndjson`);
    const lines = res.text.trimEnd().split('\n');
    expect(lines).to.have.length(25);
    expect(JSON.parse(lines[0]!)).to.have.keys('userId', 'version', 'data');

    const target = (await ops.createWorkspace({ name: 'target' })).workspaceId;
    const imported = await upload(target, `${res.text}{"userId":"x"}\n`);
    expect(imported.status).to.equal(200);
    expect(imported.body.data).to.deep.include({ complete: true, lines: 26, imported: 25, failed: 1, mode: 'skip' });
    expect(imported.body.data.errors).to.deep.equal([{ line: 26, code: 'INVALID_REQUEST', error: 'version must be a non-negative integer', userId: 'x' }]);
    expect((await ops.exportPlayer(target, '7')).data).to.deep.equal((await ops.exportPlayer(source, '7')).data);

    const again = await upload(target, res.text, '?mode=fail');
    expect(again.body.data).to.deep.include({ complete: false, imported: 0, failed: 25 });
  });

  it('refuses what the public API could not have written, naming the line, the player and the field', async () => {
    const ops = testOps(redis);
    const ws = await ops.createWorkspace({ name: 'strict' });
    const at = '2026-11-23T10:00:00.000Z';
    const line = (userId: unknown, version: number, data: Record<string, unknown>) => JSON.stringify({ userId, version, data });
    const top = 2 ** 52;
    const body = [
      line('empty-key', 1, { '': { value: 1, updated_at: at } }),
      line('top', Number.MAX_SAFE_INTEGER, { a: { value: 1, updated_at: at } }),
      line('past', top + 1, {}),
      line('highest', top, { a: { value: 1, updated_at: at } }),
      line('wide', 1, { ['\u{1F600}'.repeat(100)]: { value: 1, updated_at: at } }),
    ].join('\n');
    const res = await upload(ws.workspaceId, body);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.include({ imported: 2, failed: 3 });
    expect(res.body.data.errors).to.deep.equal([
      { line: 1, userId: 'empty-key', code: 'INVALID_REQUEST', error: 'data[""]: a key is 1-128 characters without control characters' },
      { line: 2, userId: 'top', code: 'INVALID_REQUEST', error: `version must be a whole number from 0 to ${top} (2^52; beyond, ifVersion could not match it for long)` },
      { line: 3, userId: 'past', code: 'INVALID_REQUEST', error: `version must be a whole number from 0 to ${top} (2^52; beyond, ifVersion could not match it for long)` },
    ]);
    // The highest version imported is read back exactly, and ifVersion matches it.
    const api = (path: string, body?: unknown) => call(service, body === undefined ? 'GET' : 'POST', path, { key: ws.apiKey, body });
    expect((await api('/data?userId=highest')).body.version).to.equal(top);
    const written = await api('/data/set', { userId: 'highest', key: 'a', value: 2, ifVersion: top });
    expect([written.status, written.body.version]).to.deep.equal([200, top + 1]);
    expect((await api('/data/set', { userId: 'highest', key: 'a', value: 3, ifVersion: top + 1 })).status).to.equal(200);
    expect((await api(`/data?userId=wide&key=${encodeURIComponent('\u{1F600}'.repeat(100))}`)).body.data.value).to.equal(1);
  });

  it('refuses an upload that is not NDJSON, an unknown mode and an unknown workspace', async () => {
    const ops = testOps(redis);
    const id = (await ops.createWorkspace({ name: 'w' })).workspaceId;
    expect((await upload(id, '{}', '', 'application/json')).body.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
    const badMode = await upload(id, '', '?mode=merge');
    expect([badMode.status, badMode.body.code]).to.deep.equal([400, 'INVALID_REQUEST']);
    expect((await upload('nope', '')).status).to.equal(404);
    expect((await adminCall(service, 'GET', '/workspaces/nope/export')).status).to.equal(404);
  });
});

describe('admin API: an import upload the client abandons', () => {
  it('is a 400 "request aborted" in the log and the metrics, never a 500, and leaves no temp file', async () => {
    const log = new LogCapture();
    const config = testConfig({ ADMIN_TOKEN, LOG_LEVEL: 'debug' });
    const service = await startService(config, createLogger(config, log));
    const redis = testRedis();
    const route = '/admin/v1/workspaces/:id/import';
    const counted = async (status: number) => {
      const text = await (await fetch(`${service.opsUrl}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith('pds_http_requests_total{') && l.includes(`route="${route}"`) && l.includes(`status="${status}"`));
      return line === undefined ? 0 : Number(line.split(' ').at(-1));
    };
    const spools = () => readdirSync(tmpdir()).filter((f) => f.startsWith('pds-import-'));
    try {
      const id = (await testOps(redis).createWorkspace({ name: 'aborted' })).workspaceId;
      const [before400, before500] = [await counted(400), await counted(500)];
      const spoolsBefore = new Set(spools());
      const head =
        `POST /admin/v1/workspaces/${id}/import HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\n` +
        'Content-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n';
      const socket = connect(Number(new URL(service.opsUrl).port), '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.write(`${head}{"userId":"1","version":1,"data":{}}\n{"userId":"2",`);
      // The upload is being spooled once its temp folder exists; then the client goes away.
      for (let i = 0; !spools().some((f) => !spoolsBefore.has(f)); i++) {
        expect(i, 'the upload reaches its temp file').to.be.lessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
      socket.destroy();
      const requestLine = async () => log.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.route === route);
      for (let i = 0; (await requestLine()) === undefined; i++) {
        expect(i, 'the aborted request is logged').to.be.lessThan(1000);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(await requestLine()).to.include({ status: 400, level: 30 });
      expect(log.lines.map((l) => JSON.parse(l)).filter((l) => l.level >= 50), log.text).to.deep.equal([]);
      expect(await counted(400)).to.equal(before400 + 1);
      expect(await counted(500)).to.equal(before500);
      expect(spools().filter((f) => !spoolsBefore.has(f))).to.deep.equal([]);
    } finally {
      await service.close();
      redis.disconnect();
    }
  });
});
