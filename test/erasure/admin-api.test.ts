// The erasure side of the admin API (ops listener): erase, follow, list with counts and filters,
// dismiss, and the games map; its clear 4xx for bad input; and the metrics. Every answer is
// checked against the OpenAPI document.
import { expect } from 'chai';
import { adminCall, ADMIN_TOKEN, testOps } from '../support/admin.js';
import { ERASURE_ENV, erasureNotification, freshGameId, freshUserId, keysOfPlayer, postWebhook, waitForJob } from '../support/erasure.js';
import { call, fetchRecorded, startTestService, testConfig, useService } from '../support/service.js';

describe('admin API: erasures and games', function () {
  this.timeout(30_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN });
  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });

  it('erases a player (201, the job), follows it to done, and lists it with the counts', async () => {
    const ws = await ops().createWorkspace({ name: 'admin-erase', plan: 'pro' });
    const userId = freshUserId();
    await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: 1 } });
    // A message waiting for the player lives in its slot too, and goes with it.
    expect((await call(h.service, 'POST', '/messages', { key: ws.apiKey, body: { userId, message: { gift: 1 } } })).status).to.equal(200);
    const before = (await adminCall(h.service, 'GET', '/erasures?limit=1')).body.data.counts;
    const created = await adminCall(h.service, 'POST', '/erasures', { body: { userId, workspaceId: ws.workspaceId } });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data).to.deep.include({ state: 'pending', source: 'admin-api', requestedBy: 'admin-api', scope: { workspaceId: ws.workspaceId } });
    expect(created.text).to.not.include(String(userId));
    const jobId = created.body.data.jobId as string;
    await waitForJob(h.redis, jobId);
    const shown = await adminCall(h.service, 'GET', `/erasures/${jobId}`);
    expect(shown.body.data).to.deep.include({ state: 'done', workspaces: [ws.workspaceId] });
    // The player's hash, its first restore point (the player before that write), the points' index and its messages.
    expect(shown.body.data.progress).to.deep.equal({ phase: 'finished', workspacesTotal: 1, workspacesDone: 1, keysDeleted: 4 });
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    const listed = await adminCall(h.service, 'GET', `/erasures?user=${userId}`);
    expect(listed.body.data.jobs.map((j: { jobId: string }) => j.jobId)).to.deep.equal([jobId]);
    const counts = listed.body.data.counts;
    expect(counts.requested - before.requested).to.be.at.least(1);
    expect(counts.done - before.done).to.be.at.least(1);
    const done = await adminCall(h.service, 'GET', '/erasures?state=done&limit=500');
    expect(done.body.data.jobs.map((j: { jobId: string }) => j.jobId)).to.include(jobId);
  });

  it('answers bad input with a clear 4xx in the error envelope', async () => {
    const ws = await ops().createWorkspace({ name: 'admin-erase-bad', plan: 'pro' });
    const cases: Array<[string, string, unknown, number, string]> = [
      ['POST', '/erasures', { userId: 1 }, 400, 'Name one workspace'],
      ['POST', '/erasures', { userId: 1, workspaceId: ws.workspaceId, allWorkspaces: true }, 400, 'Name one workspace'],
      ['POST', '/erasures', { userId: 'no spaces!', workspaceId: ws.workspaceId }, 400, 'User id'],
      ['POST', '/erasures', { workspaceId: ws.workspaceId }, 400, 'userId'],
      ['POST', '/erasures', { userId: 1, workspaceId: 'ws_missing' }, 404, 'ws_missing'],
      ['GET', '/erasures?state=lost', undefined, 400, 'state'],
      ['GET', '/erasures?limit=0', undefined, 400, 'limit'],
      ['GET', '/erasures/er_missing', undefined, 404, 'er_missing'],
      ['POST', '/erasures/er_missing/dismiss', undefined, 404, 'er_missing'],
      ['PUT', `/workspaces/${ws.workspaceId}/games`, { gameIds: ['abc'] }, 400, 'Game id'],
      ['PUT', `/workspaces/${ws.workspaceId}/games`, { gameIds: 5 }, 400, 'gameIds'],
      ['PUT', '/workspaces/ws_missing/games', { gameIds: [] }, 404, 'ws_missing'],
      ['GET', '/workspaces/ws_missing/games', undefined, 404, 'ws_missing'],
    ];
    for (const [method, path, body, status, words] of cases) {
      const res = await adminCall(h.service, method, path, body === undefined ? {} : { body });
      expect(res.status, `${method} ${path}: ${res.text}`).to.equal(status);
      expect(res.body.success).to.equal(false);
      expect(res.body.error, `${method} ${path}`).to.include(words);
    }
  });

  it('maps games (409 for a game of another workspace), and dismisses only an unmapped job', async () => {
    const [a, b] = [await ops().createWorkspace({ name: 'games-a' }), await ops().createWorkspace({ name: 'games-b' })];
    const [g1, g2] = [freshGameId(), freshGameId()];
    const set = await adminCall(h.service, 'PUT', `/workspaces/${a.workspaceId}/games`, { body: { gameIds: [g1, String(g2), g1] } });
    expect(set.status, set.text).to.equal(200);
    expect(set.body.data.gameIds).to.have.members([String(g1), String(g2)]);
    const clash = await adminCall(h.service, 'PUT', `/workspaces/${b.workspaceId}/games`, { body: { gameIds: [g2] } });
    expect(clash.status).to.equal(409);
    expect(clash.body.code).to.equal('CONFLICT');
    expect((await adminCall(h.service, 'GET', `/workspaces/${b.workspaceId}/games`)).body.data.gameIds).to.deep.equal([]);

    const userId = freshUserId();
    const hook = await postWebhook(h.service.baseUrl, erasureNotification(userId, [g1, freshGameId()]));
    const jobId = hook.body.data.jobId as string;
    await waitForJob(h.redis, jobId, ['unmapped']);
    const dismissed = await adminCall(h.service, 'POST', `/erasures/${jobId}/dismiss`);
    expect(dismissed.status, dismissed.text).to.equal(200);
    expect(dismissed.body.data.state).to.equal('done');
    expect(await h.redis.hexists(`pds:{erasure}:job:${jobId}`, 'userId')).to.equal(0);
    const again = await adminCall(h.service, 'POST', `/erasures/${jobId}/dismiss`);
    expect(again.status).to.equal(409);
  });

  it('frees a deleted workspace\'s games for another workspace', async () => {
    const [a, b] = [await ops().createWorkspace({ name: 'games-deleted' }), await ops().createWorkspace({ name: 'games-next' })];
    const game = freshGameId();
    expect((await adminCall(h.service, 'PUT', `/workspaces/${a.workspaceId}/games`, { body: { gameIds: [game] } })).status).to.equal(200);
    expect((await adminCall(h.service, 'PUT', `/workspaces/${b.workspaceId}/games`, { body: { gameIds: [game] } })).status).to.equal(409);
    expect((await adminCall(h.service, 'DELETE', `/workspaces/${a.workspaceId}`)).status).to.equal(200);
    const moved = await adminCall(h.service, 'PUT', `/workspaces/${b.workspaceId}/games`, { body: { gameIds: [game] } });
    expect(moved.status, moved.text).to.equal(200);
    expect(moved.body.data.gameIds).to.deep.equal([String(game)]);
  });

  it('counts erasures in /metrics', async () => {
    const ws = await ops().createWorkspace({ name: 'admin-erase-metrics', plan: 'pro' });
    const created = await adminCall(h.service, 'POST', '/erasures', { body: { userId: freshUserId(), workspaceId: ws.workspaceId } });
    await waitForJob(h.redis, created.body.data.jobId);
    // One more poll, for the gauges.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const text = (await fetchRecorded(`${h.service.opsUrl}/metrics`, 'GET', {}, undefined)).text;
    expect(text).to.match(/^pds_erasures_done_total(\{[^}]*\})? [1-9]/m);
    expect(text).to.match(/^pds_erasure_jobs\{[^}]*state="pending"[^}]*\} \d+/m);
    expect(text).to.match(/^pds_erasure_attempts_failed_total(\{[^}]*\})? \d+/m);
    expect(text).to.match(/^pds_erasures_requested_total\{[^}]*source="webhook"[^}]*\} \d+/m);
  });
});

describe('admin API: erasures without the digest secret', function () {
  this.timeout(30_000);

  it('answers 409 ERASURE_NOT_CONFIGURED, and runs no worker', async () => {
    const service = await startTestService({ ADMIN_TOKEN });
    try {
      const ws = await adminCall(service, 'POST', '/workspaces', { body: { name: 'no-secret' } });
      const res = await adminCall(service, 'POST', '/erasures', { body: { userId: 1, workspaceId: ws.body.data.workspaceId } });
      expect(res.status).to.equal(409);
      expect(res.body.code).to.equal('ERASURE_NOT_CONFIGURED');
      expect(res.body.error).to.include('ERASURE_DIGEST_SECRET');
      expect(service.erasureWorker).to.equal(undefined);
    } finally {
      await service.close();
    }
  });
});
