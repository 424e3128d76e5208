// The admin API's workspace export (GET .../export, NDJSON streamed) and import (POST
// .../import, an NDJSON upload read as it arrives, answered with a summary and per-line errors).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import type { RunningService } from '../../src/server.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { fetchRecorded, startTestService, testRedis } from '../support/service.js';

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
