// Copies of an erased player outside its own keys (issue 38 items 3-6), against the real
// service: answers kept under an Idempotency-Key in other slots (a many-player acquire's whole
// answer in its claim, a board write's answer in the board's slot), the audit trail's board
// removals, the players list (also when an instance's batch of notes lands after the erasure),
// and the bytes of its waiting messages in the storage totals.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { userDigest } from '../../src/domain/erasure.js';
import { keys } from '../../src/store/keys.js';
import { recordPlayerWrites } from '../../src/store/workspaces/player-index.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { ADMIN_TOKEN, adminCall, testOps } from '../support/admin.js';
import { DIGEST_SECRET, ERASURE_ENV, freshUserId } from '../support/erasure.js';
import { call, testConfig, useService } from '../support/service.js';

const keyHash = (key: string) => createHash('sha256').update(key).digest('base64url');

describe('an erasure reaches the copies of the player outside its keys', function () {
  this.timeout(30_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN, STORAGE_FLUSH_MS: '50', PLAYER_INDEX_FLUSH_MS: '60000' });
  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });
  const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) => call(h.service, 'POST', path, { key, body, headers });
  const erase = async (userId: number, workspaceId: string) => {
    const job = await ops().erasures.run((await ops().erasures.request({ userId, workspaceId })).jobId);
    expect(job.state).to.equal('done');
  };

  it('a many-player acquire\'s answer kept under its key, and a board write\'s, are gone: a replay hands none of the player\'s messages or sessions', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-kept', plan: 'pro' });
    const userId = freshUserId();
    const other = userId + 1;
    const secret = `secret-gift-${userId}`;
    expect((await post(ws.apiKey, '/messages', { userId, message: { gift: secret } })).status).to.equal(200);
    const body = { players: [userId, other], owner: 'job-1', load: true };
    const first = await post(ws.apiKey, '/sessions/acquire', body, { 'idempotency-key': `join-${userId}` });
    expect(first.status, first.text).to.equal(200);
    expect(first.text).to.include(secret);
    const session = first.body.data.players[0].sessionId as string;
    const claim = keys.idempotencyClaim(ws.workspaceId, keyHash(`join-${userId}`));
    expect(await h.redis.get(claim)).to.include(secret);
    const scored = await post(ws.apiKey, '/leaderboards/wins/set', { userId, score: 7351.25 }, { 'idempotency-key': `score-${userId}` });
    expect(scored.status, scored.text).to.equal(200);
    const boardAnswer = keys.boardIdempotency(ws.workspaceId, 'wins', keyHash(`score-${userId}`));
    expect(await h.redis.get(boardAnswer)).to.include('7351.25');

    await erase(userId, ws.workspaceId);
    expect(await h.redis.exists(claim, boardAnswer)).to.equal(0);
    // The retry is applied anew, as any request after the erasure: the player is a new one.
    const replay = await post(ws.apiKey, '/sessions/acquire', body, { 'idempotency-key': `join-${userId}` });
    expect(replay.status, replay.text).to.equal(200);
    expect(replay.text).to.not.include(secret).and.not.include(session);
    expect(replay.body.data.players[0]).to.include({ userId: String(userId), success: true, version: 0 });
    expect(replay.body.data.players[1]).to.include({ userId: String(other), success: true, owner: 'job-1' });
  });

  it('the audit trail keeps no user id of a board entry\'s removal, the digest instead', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-audit-board', plan: 'pro' });
    const userId = freshUserId();
    const elsewhere = await ops().createWorkspace({ name: 'erase-audit-board-other', plan: 'pro' });
    for (const w of [ws, elsewhere]) {
      expect((await post(w.apiKey, '/leaderboards/wins/set', { userId, score: 5 })).status).to.equal(200);
      await ops().leaderboards.removeEntry(w.workspaceId, 'wins', userId);
    }
    await erase(userId, ws.workspaceId);
    const removal = (await ops().readAudit({ workspaceId: ws.workspaceId, limit: 50 })).find((e) => e.action === 'board.remove-entry');
    expect(removal?.details).to.deep.equal({ userId: `erased-user:${userDigest(DIGEST_SECRET, String(userId))}`, deleted: 1 });
    // The same user in a workspace it was not erased from keeps its entry as it was.
    const kept = (await ops().readAudit({ workspaceId: elsewhere.workspaceId, limit: 50 })).find((e) => e.action === 'board.remove-entry');
    expect(kept?.details?.['userId']).to.equal(String(userId));
  });

  it('the players list no longer shows the player, even when an instance\'s notes of its writes land after the erasure', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-list', plan: 'pro' });
    const userId = freshUserId();
    for (const u of [userId, userId + 1]) expect((await post(ws.apiKey, '/data/set', { userId: u, key: 'coins', value: 1 })).status).to.equal(200);
    await h.service.playerIndex.flush();
    const listed = async () => {
      const res = await adminCall(h.service, 'GET', `/workspaces/${ws.workspaceId}/players`);
      expect(res.status).to.equal(200);
      return res.body.data as { listed: number; players: Array<{ userId: string }> };
    };
    expect((await listed()).players.map((p) => p.userId)).to.have.members([String(userId), String(userId + 1)]);
    await erase(userId, ws.workspaceId);
    expect(await listed()).to.deep.include({ listed: 1 });
    expect((await listed()).players.map((p) => p.userId)).to.deep.equal([String(userId + 1)]);
    expect((await ops().listPlayers(ws.workspaceId, { userId: String(userId) })).players).to.deep.equal([]);
    // Another instance's batch, noted before the erasure, written after it.
    await recordPlayerWrites(h.redis, ws.workspaceId, [String(userId), String(Date.now() - 1000)]);
    expect((await listed()).players.map((p) => p.userId)).to.deep.equal([String(userId + 1)]);
    expect(await h.redis.zscore(keys.workspacePlayers(ws.workspaceId), String(userId))).to.equal(null);
  });

  it('a followed write\'s intent left for the sweep does not put the player\'s id back on the board after the erasure', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-follow', plan: 'pro' });
    const userId = freshUserId();
    await ops().leaderboards.follow(ws.workspaceId, 'levels', 'level');
    expect((await post(ws.apiKey, '/data/set', { userId, key: 'level', value: 5 })).status).to.equal(200);
    const followed = keys.boardFollowed(ws.workspaceId, 'levels');
    expect(await h.redis.hget(followed, String(userId))).to.not.equal(null);
    // As an instance that died between a write and its boards leaves it: the sweep mends it
    // (reads the player, writes the board) until the write can no longer land.
    // In a shard, and in the one key of the release before.
    const intent = JSON.stringify([ws.workspaceId, String(userId), Date.now(), 'n1']);
    await h.redis.zadd(keys.followPending(5), Date.now() - 600, intent);
    await h.redis.zadd(keys.followPendingLegacy(), Date.now() - 600, intent);
    await erase(userId, ws.workspaceId);
    expect(await h.redis.zscore(keys.followPending(5), intent)).to.equal(null);
    expect(await h.redis.zscore(keys.followPendingLegacy(), intent)).to.equal(null);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await h.redis.hget(followed, String(userId))).to.equal(null);
  });

  it('the player\'s waiting messages leave the workspace\'s messageBytes at once', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-messages', plan: 'pro' });
    const userId = freshUserId();
    for (const days of [1, 30, 90]) {
      expect((await post(ws.apiKey, '/messages', { userId, message: { gift: 'x'.repeat(1000) }, ttlSeconds: days * 86_400 })).status).to.equal(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await readStorageTotals(h.redis, ws.workspaceId)).messageBytes).to.be.greaterThan(3000);
    await erase(userId, ws.workspaceId);
    expect((await readStorageTotals(h.redis, ws.workspaceId)).messageBytes).to.equal(0);
  });

  it('the player\'s history leaves the workspace\'s history total with its bytes, so the quota (data only) stays exact', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-history', plan: 'pro' });
    const userId = freshUserId();
    for (let i = 0; i < 4; i++) {
      expect((await post(ws.apiKey, '/data/set', { userId, key: 'inventory', value: { round: i, items: 'x'.repeat(2000) } })).status).to.equal(200);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = await readStorageTotals(h.redis, ws.workspaceId);
    expect(before.historyBytes, 'the writes kept history').to.be.greaterThan(0);
    await erase(userId, ws.workspaceId);
    const after = await readStorageTotals(h.redis, ws.workspaceId);
    expect(after.historyBytes).to.equal(0);
    expect(after.bytes).to.equal(0);
  });
});
