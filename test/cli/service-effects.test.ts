// The admin CLI's effect on a running service: what it creates works at once, what it revokes stops at once.
import { expect } from 'chai';
import type { RunningService } from '../../src/server.js';
import { cli } from '../support/cli.js';
import { call, startTestService } from '../support/service.js';

describe('admin CLI against a running service', function () {
  this.timeout(60_000);
  let service: RunningService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('workspace create --json prints one line with the first key, which works at once', async () => {
    const res = await cli(['workspace', 'create', '--name', 'CLI Studio', '--plan', 'pro', '--json']);
    expect(res.code).to.equal(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).to.have.length(1);
    const out = JSON.parse(lines[0]!);
    expect(Object.keys(out).sort()).to.deep.equal(['apiKey', 'keyId', 'name', 'plan', 'workspaceId']);
    expect(out).to.include({ name: 'CLI Studio', plan: 'pro' });
    const ping = await call(service, 'GET', '/ping', { key: out.apiKey });
    expect(ping.body).to.deep.equal({ success: true, workspaceId: out.workspaceId, workspaceName: 'CLI Studio', plan: 'pro' });
  });

  it('key create, key list (no raw keys) and key revoke', async () => {
    const ws = JSON.parse((await cli(['workspace', 'create', '--name', 'Keys', '--json'])).stdout);
    expect(ws.plan).to.equal('free');
    const created = JSON.parse((await cli(['key', 'create', '--workspace', ws.workspaceId, '--json'])).stdout);
    expect(created).to.include.all.keys('apiKey', 'keyId', 'workspaceId');
    expect(created.workspaceId).to.equal(ws.workspaceId);

    const list = await cli(['key', 'list', '--workspace', ws.workspaceId, '--json']);
    expect(list.code).to.equal(0);
    expect(list.stdout.trim().split('\n')).to.have.length(1);
    const listed = JSON.parse(list.stdout);
    expect(listed.map((k: { keyId: string }) => k.keyId).sort()).to.deep.equal([ws.keyId, created.keyId].sort());
    expect(list.stdout).to.not.include(ws.apiKey);
    expect(list.stdout).to.not.include(created.apiKey);
    expect(listed[0]).to.include({ status: 'active', scope: 'write' });

    const revoked = await cli(['key', 'revoke', created.keyId, '--yes', '--json']);
    expect(revoked.code).to.equal(0);
    expect(JSON.parse(revoked.stdout)).to.include({ keyId: created.keyId, status: 'revoked' });
    await new Promise((r) => setTimeout(r, 50));
    expect((await call(service, 'GET', '/ping', { key: created.apiKey })).status).to.equal(401);
    expect((await call(service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(200);
  });

  it('human output shows the key once and says to store it', async () => {
    const res = await cli(['workspace', 'create', '--name', 'Human']);
    expect(res.code).to.equal(0);
    expect(res.stdout).to.match(/API key: pds_[0-9A-Za-z]{40}/);
    expect(res.stdout).to.match(/not shown again/);
  });

  it('errors go to stderr with a non-zero exit', async () => {
    const badPlan = await cli(['workspace', 'create', '--name', 'X', '--plan', 'gold', '--json']);
    expect(badPlan.code).to.not.equal(0);
    expect(badPlan.stdout).to.equal('');
    expect(JSON.parse(badPlan.stderr)).to.deep.equal({ success: false, error: 'Plan must be one of free, pro, got "gold"', code: 'INVALID_REQUEST' });

    const unknown = await cli(['key', 'revoke', 'key_doesnotexist', '--yes']);
    expect(unknown.code).to.not.equal(0);
    expect(unknown.stderr).to.match(/API key key_doesnotexist not found/);

    const noWs = await cli(['key', 'list', '--workspace', 'ws_nope']);
    expect(noWs.code).to.not.equal(0);
    expect(noWs.stderr).to.match(/Workspace ws_nope not found/);

    const missing = await cli(['workspace', 'create']);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.match(/--name/);

    const noRedis = await cli(['key', 'list', '--workspace', 'x'], { REDIS_URL: 'redis://127.0.0.1:1' });
    expect(noRedis.code).to.not.equal(0);
    expect(noRedis.stderr).to.match(/Cannot reach Redis/);
  });
});
