// Erasure player names (docs/erasure.md, "Players named after the user id"): a workspace's
// templates such as `Player_{userId}` make an erasure of a user id erase the players named after
// it too, as the Luau facades name a ProfileStore's profiles. Walked as the checklist's test
// walks a player (test/support/erasure-walk.ts): a ProfileStore-style player with data, history,
// boards and kept answers is nowhere after the webhook's erasure of its user; a workspace
// without the template keeps its own. Then the admin API's round trip and refusals, and a job
// interrupted midway that finishes on its retry.
import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { tombstoneDigest } from '../../src/domain/erasure.js';
import { ErasureRequests } from '../../src/erasure/requests.js';
import { AuditLogStore } from '../../src/store/installation/audit-log.js';
import { keys } from '../../src/store/keys.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { adminCall, ADMIN_TOKEN, testOps } from '../support/admin.js';
import { DIGEST_SECRET, ERASURE_ENV, TestPlace, testWorker, erasureNotification, freshGameId, freshUserId, keysOfPlayer, postWebhook, waitForJob } from '../support/erasure.js';
import { walkFor } from '../support/erasure-walk.js';
import { call, fetchRecorded, testConfig, useService } from '../support/service.js';

describe('erasure player names: the players named after a user id', function () {
  this.timeout(60_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN, STORAGE_FLUSH_MS: '50', PLAYER_INDEX_FLUSH_MS: '60000' });
  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });

  it('erases a ProfileStore-style player Player_<id> everywhere in a workspace with the template, and leaves it in one without', async () => {
    const [a, b] = [await ops().createWorkspace({ name: 'names-profilestore', plan: 'pro' }), await ops().createWorkspace({ name: 'names-plain', plan: 'pro' })];
    const set = await adminCall(h.service, 'PUT', `/workspaces/${a.workspaceId}/erasure-players`, { body: { templates: ['Player_{userId}', 'PlayerData_v2..Player_{userId}'] } });
    expect(set.status, set.text).to.equal(200);
    const userId = freshUserId();
    const profile = `Player_${userId}`;
    const versioned = `PlayerData_v2..Player_${userId}`;
    const other = `Player_${userId + 1}`;
    const tag = randomInt(1e9, 2e9);
    const marks = { userId: String(userId), data: `names-data-${tag}`, history: `names-old-${tag}`, score: '9137.25', level: '6421.5' };
    const post = async (apiKey: string, path: string, body: unknown, key?: string) => {
      const res = await call(h.service, 'POST', path, { key: apiKey, body, headers: key === undefined ? {} : { 'idempotency-key': `${key}-${tag}` } });
      expect(res.status, `${path}: ${res.text}`).to.equal(200);
      return res;
    };

    // The profile of the default store, as the ProfileStore facade writes it: data and history,
    // a write kept under a key, a board's score (kept answer), a followed board, a many-player save.
    await post(a.apiKey, '/data/set', { userId: profile, key: 'Coins', value: { note: marks.history } });
    await post(a.apiKey, '/data/set', { userId: profile, key: 'Coins', value: { note: marks.data } }, 'one');
    expect((await adminCall(h.service, 'PATCH', `/workspaces/${a.workspaceId}/leaderboards/levels`, { body: { follow: 'Level' } })).status).to.be.lessThan(300);
    await post(a.apiKey, '/leaderboards/wins/set', { userId: profile, score: Number(marks.score) }, 'score');
    await post(a.apiKey, '/leaderboards/wins/set', { userId: other, score: 1 });
    await post(a.apiKey, '/data/set', { userId: profile, key: 'Level', value: Number(marks.level) });
    await post(a.apiKey, '/data/batch', { players: [{ userId: profile, ops: [{ op: 'set', key: 'Bag', value: [marks.data] }] }, { userId: other, ops: [{ op: 'set', key: 'Bag', value: [] }] }] }, 'batch');
    // Another store's profile, and the user id's own player.
    await post(a.apiKey, '/data/set', { userId: versioned, key: 'Coins', value: marks.data });
    await post(a.apiKey, '/data/set', { userId, key: 'Coins', value: marks.data });
    // Support staff read the profile: the audit trail names it.
    expect((await adminCall(h.service, 'GET', `/workspaces/${a.workspaceId}/players/${profile}`)).status).to.equal(200);
    // The other workspace serves the same user with the same profile name, but has no template.
    await post(b.apiKey, '/data/set', { userId: profile, key: 'Coins', value: marks.data });
    const exported = await fetchRecorded(`${h.service.opsUrl}/admin/v1/workspaces/${a.workspaceId}/export`, 'GET', { authorization: `Bearer ${ADMIN_TOKEN}` }, undefined);
    expect(exported.status).to.equal(200);
    await h.service.playerIndex.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));

    const names = [String(userId), profile, versioned];
    let keysBefore = 0;
    for (const name of names) keysBefore += (await keysOfPlayer(h.redis, a.workspaceId, name)).length;
    const totalsBefore = await readStorageTotals(h.redis, a.workspaceId);
    const before = (await walkFor(h.redis, a.workspaceId, marks)).found;
    expect(before.map((f) => f.what)).to.include.members(['userId', 'data', 'score', 'level']);
    // The profile is on the boards and the players list, under its name.
    expect(before.filter((f) => f.what === 'userId').map((f) => f.key)).to.include.members([
      keys.boardScores(a.workspaceId, 'wins', 'all'),
      keys.boardFollowed(a.workspaceId, 'levels'),
      keys.workspacePlayers(a.workspaceId),
    ]);

    // The platform's request: the user and both games.
    const [gameA, gameB] = [freshGameId(), freshGameId()];
    await ops().erasures.setGames(a.workspaceId, [gameA]);
    await ops().erasures.setGames(b.workspaceId, [gameB]);
    const sent = await postWebhook(h.service.baseUrl, erasureNotification(userId, [gameA, gameB]));
    expect(sent.status, sent.text).to.equal(200);
    const done = await waitForJob(h.redis, sent.body.data.jobId as string);
    // Progress adds up over the three players.
    expect(Number(done['keysDeleted'])).to.equal(keysBefore);
    expect(keysBefore).to.be.greaterThan(6);
    for (const name of names) expect(await keysOfPlayer(h.redis, a.workspaceId, name), name).to.deep.equal([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await readStorageTotals(h.redis, a.workspaceId)).players).to.equal(totalsBefore.players - 3);

    // An import of the export taken before brings none of them back: each has its tombstone.
    const imported = await fetchRecorded(
      `${h.service.opsUrl}/admin/v1/workspaces/${a.workspaceId}/import?mode=overwrite`,
      'POST',
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      exported.text,
    );
    expect(imported.status, imported.text).to.equal(200);
    expect(imported.body.data.erased).to.equal(3);
    await h.service.playerIndex.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = await walkFor(h.redis, a.workspaceId, { ...marks, profile });
    expect(after.found, JSON.stringify(after.found)).to.deep.equal([]);
    expect(after.keysRead).to.be.greaterThan(5);

    // The workspace without the template keeps its Player_<id>: it is another player there.
    expect(await keysOfPlayer(h.redis, b.workspaceId, profile)).to.have.length.greaterThan(0);
    expect((await call(h.service, 'GET', `/data?userId=${profile}`, { key: b.apiKey })).body.data.Coins).to.equal(marks.data);
  });

  it('sets and reads the templates through the admin API, refuses bad ones with a 400, and forgets them with the workspace', async () => {
    const ws = await ops().createWorkspace({ name: 'names-admin' });
    const path = `/workspaces/${ws.workspaceId}/erasure-players`;
    expect((await adminCall(h.service, 'GET', path)).body.data).to.deep.equal({ workspaceId: ws.workspaceId, templates: [] });
    const set = await adminCall(h.service, 'PUT', path, { body: { templates: ['Player_{userId}', '{userId}', 'Player_{userId}', 'Guilds..{userId}-x'] } });
    expect(set.status, set.text).to.equal(200);
    // A repeat is kept once, and {userId} alone (that player is always erased) is dropped.
    expect(set.body.data).to.deep.equal({ workspaceId: ws.workspaceId, templates: ['Player_{userId}', 'Guilds..{userId}-x'] });
    expect((await adminCall(h.service, 'GET', path)).body.data.templates).to.deep.equal(['Player_{userId}', 'Guilds..{userId}-x']);
    const audit = await ops().readAudit({ workspaceId: ws.workspaceId, limit: 5 });
    expect(audit[0]).to.deep.include({ action: 'workspace.set-erasure-players', target: `workspace:${ws.workspaceId}` });
    expect(audit[0]!.details).to.deep.equal({ templates: 'Player_{userId} Guilds..{userId}-x' });

    const cases: Array<[unknown, string]> = [
      [{ templates: ['Player_'] }, '{userId} exactly once'],
      [{ templates: ['{userId}_{userId}'] }, '{userId} exactly once'],
      [{ templates: ['Player {userId}'] }, 'A-Z a-z 0-9 _ . -'],
      [{ templates: ['Player:{userId}'] }, 'A-Z a-z 0-9 _ . -'],
      [{ templates: ['{Player}_{userId}'] }, 'A-Z a-z 0-9 _ . -'],
      [{ templates: [`${'P'.repeat(64)}{userId}`] }, 'at most 63 characters'],
      [{ templates: [`${'P'.repeat(93)}{userId}`] }, 'more than 100 characters'],
      [{ templates: ['{userId}0'] }, 'other than a digit'],
      [{ templates: ['7{userId}'] }, 'other than a digit'],
      // Two that can name one player for two users: an erasure of one would erase the other's.
      [{ templates: ['P{userId}', 'P1{userId}'] }, 'can name one player for two users'],
      [{ templates: ['{userId}_34', '12_{userId}'] }, 'can name one player for two users'],
      [{ templates: ['Player_{userId}', 'Player_{userId}0'] }, 'can name one player for two users'],
      [{ templates: Array.from({ length: 11 }, (_, i) => `P${i}_{userId}`) }, 'templates'],
      [{ templates: [5] }, 'templates'],
      [{ templates: 'Player_{userId}' }, 'templates'],
      [{}, 'templates'],
    ];
    for (const [body, words] of cases) {
      const res = await adminCall(h.service, 'PUT', path, { body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).to.equal(400);
      expect(res.body).to.deep.include({ success: false, code: 'INVALID_REQUEST' });
      expect(res.body.error, JSON.stringify(body)).to.include(words);
    }
    // Refused: the list is as it was.
    expect((await adminCall(h.service, 'GET', path)).body.data.templates).to.deep.equal(['Player_{userId}', 'Guilds..{userId}-x']);
    expect((await adminCall(h.service, 'PUT', '/workspaces/ws_missing/erasure-players', { body: { templates: [] } })).status).to.equal(404);
    expect((await adminCall(h.service, 'GET', '/workspaces/ws_missing/erasure-players')).status).to.equal(404);

    expect(await h.redis.exists(keys.erasurePlayerNames(ws.workspaceId))).to.equal(1);
    expect((await adminCall(h.service, 'DELETE', `/workspaces/${ws.workspaceId}`)).status).to.equal(200);
    expect(await h.redis.exists(keys.erasurePlayerNames(ws.workspaceId))).to.equal(0);
    // Cleared with none: the key goes.
    const kept = await ops().createWorkspace({ name: 'names-cleared' });
    await ops().erasures.setErasurePlayers(kept.workspaceId, ['Player_{userId}']);
    expect((await adminCall(h.service, 'PUT', `/workspaces/${kept.workspaceId}/erasure-players`, { body: { templates: [] } })).body.data.templates).to.deep.equal([]);
    expect(await h.redis.exists(keys.erasurePlayerNames(kept.workspaceId))).to.equal(0);
  });
});

describe('erasure player names: a job interrupted midway', function () {
  this.timeout(30_000);
  // No service with the digest secret runs here, so only the test's worker takes the job.
  const h = useService({});

  it('finishes on its retry: every player erased, tombstoned and removed from every place', async () => {
    const config = testConfig({ ...ERASURE_ENV, ERASURE_CLAIM_IDLE_MS: '500' });
    const ops = testOps(h.redis, { config });
    const userId = freshUserId();
    const profile = `Player_${userId}`;
    // Fails once, for the player named after the user.
    let failedOnce = false;
    const place = new TestPlace('boards (test)', (id: string) => id === profile && !failedOnce && (failedOnce = true));
    const worker = testWorker(h.redis, config, [place]);
    const ws = await ops.createWorkspace({ name: 'names-retry' });
    await ops.erasures.setErasurePlayers(ws.workspaceId, ['Player_{userId}']);
    for (const name of [String(userId), profile]) {
      await ops.setPlayerValue(ws.workspaceId, name, 'Coins', 1);
      await ops.setPlayerValue(ws.workspaceId, name, 'Coins', 2);
    }
    worker.start();
    try {
      const requests = new ErasureRequests(h.redis, config.erasure, new AuditLogStore(h.redis, 1000));
      const { job } = await requests.request({ userId: String(userId), scope: { kind: 'workspace', workspaceId: ws.workspaceId }, source: 'cli', actor: 'test' });
      const failed = await waitForJob(h.redis, job!.jobId, ['failed']);
      expect(failed['lastError']).to.include('boards (test): board node unavailable');
      const done = await waitForJob(h.redis, job!.jobId, ['done'], 10_000);
      expect(Number(done['attempts'])).to.equal(2);
      for (const name of [String(userId), profile]) {
        expect(await keysOfPlayer(h.redis, ws.workspaceId, name), name).to.deep.equal([]);
        expect(place.removed, name).to.deep.include([ws.workspaceId, name]);
      }
      expect(JSON.stringify(await h.redis.hgetall(keys.erasureJob(job!.jobId)))).to.not.include(String(userId));
      // Both are tombstoned: an import would skip either.
      for (const name of [String(userId), profile]) {
        expect(await h.redis.exists(keys.tombstone(tombstoneDigest(DIGEST_SECRET, ws.workspaceId, name))), name).to.equal(1);
      }
    } finally {
      await worker.stop();
    }
  });
});
