// What an erasure removes and how it meets a game server writing at the same moment, against
// the real service: every key carrying the player's tag (data, history, kept answers, session,
// and a key of a kind the eraser does not know), the storage totals, every workspace with
// --all-workspaces, the audit trail's digest, and the races: a session held during the
// erasure, writes running through it.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { userDigest } from '../../src/domain/erasure.js';
import { keys } from '../../src/store/keys.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { testOps, ADMIN_TOKEN } from '../support/admin.js';
import { DIGEST_SECRET, ERASURE_ENV, freshUserId, keysOfPlayer, keysOfWorkspacePlayers, waitForJob } from '../support/erasure.js';
import { call, testConfig, useService } from '../support/service.js';

describe('erasing a player', function () {
  this.timeout(30_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN, HISTORY_MAX_VERSIONS: '20', STORAGE_FLUSH_MS: '50' });
  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });
  const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) => call(h.service, 'POST', path, { key, body, headers });

  it('leaves nothing of the player in any key of the workspace, and everything of the others', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-all', plan: 'pro' });
    const userId = freshUserId();
    const others = [userId * 10 + 1, Number(String(userId).slice(0, -1)), userId + 1];
    for (const u of [userId, ...others]) expect((await post(ws.apiKey, '/data/set', { userId: u, key: 'coins', value: 1 })).status).to.equal(200);
    await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 2 }, { 'idempotency-key': `buy-${userId}` });
    await post(ws.apiKey, '/data/batch', { userId, ops: [{ op: 'set', key: 'bag', value: ['sword'] }, { op: 'increment', key: 'coins', amount: 5 }] });
    const acquired = await post(ws.apiKey, '/sessions/acquire', { userId, owner: 'server-1' });
    expect(acquired.status).to.equal(200);
    // A key of a kind the eraser has never heard of, under the player's tag: erased all the same.
    await h.redis.set(`${keys.player(ws.workspaceId, String(userId))}:msg:1`, 'a message waiting for the player');
    const mine = await keysOfPlayer(h.redis, ws.workspaceId, userId);
    expect(mine).to.include.members([
      keys.player(ws.workspaceId, String(userId)),
      keys.playerHistory(ws.workspaceId, String(userId)),
      keys.playerIdempotency(ws.workspaceId, String(userId), createHash('sha256').update(`buy-${userId}`).digest('base64url')),
    ]);
    const othersBefore = (await keysOfWorkspacePlayers(h.redis, ws.workspaceId)).filter((k) => !mine.includes(k));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const totalsBefore = await readStorageTotals(h.redis, ws.workspaceId);

    const job = await ops().erasures.request({ userId, workspaceId: ws.workspaceId });
    const done = await waitForJob(h.redis, job.jobId);
    expect(Number(done['keysDeleted'])).to.equal(mine.length);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    expect(await keysOfWorkspacePlayers(h.redis, ws.workspaceId)).to.deep.equal(othersBefore.sort());
    const totalsAfter = await readStorageTotals(h.redis, ws.workspaceId);
    expect(totalsAfter.players).to.equal(totalsBefore.players - 1);
    expect(totalsAfter.bytes).to.be.lessThan(totalsBefore.bytes);
    const read = await call(h.service, 'GET', `/data?userId=${userId}`, { key: ws.apiKey });
    expect(read.status).to.equal(404);
    expect(read.body.version).to.equal(0);
  });

  it('records the erasure in the audit trail by the user\'s digest, never the id', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-audit', plan: 'pro' });
    const userId = freshUserId();
    await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 1 });
    // Support staff looked at the player and changed it: entries that named it by its id.
    await ops().getPlayerValue(ws.workspaceId, userId, 'coins');
    await ops().setPlayerValue(ws.workspaceId, userId, 'coins', 2);
    const job = await ops().erasures.request({ userId, workspaceId: ws.workspaceId });
    await waitForJob(h.redis, job.jobId);
    const digest = userDigest(DIGEST_SECRET, String(userId));
    const entries = await ops().readAudit({ workspaceId: ws.workspaceId, limit: 50 });
    const actions = entries.map((e) => e.action);
    expect(actions).to.include('erasure.request').and.include('player.erase').and.include('player.get').and.include('player.set');
    for (const entry of entries.filter((e) => e.action !== 'workspace.create')) {
      expect(JSON.stringify(entry)).to.not.include(String(userId));
      if (entry.action.startsWith('player.') && entry.action !== 'player.erase') expect(entry.target).to.equal(`player:${ws.workspaceId}/erased-user:${digest}`);
      else expect(entry.details?.['user']).to.equal(digest);
    }
    // The finished job keeps the digest, not the id.
    const fields = await h.redis.hgetall(keys.erasureJob(job.jobId));
    expect(JSON.stringify(fields)).to.not.include(String(userId));
    expect((await ops().erasures.list({ userId, limit: 5 })).jobs.map((j) => j.jobId)).to.deep.equal([job.jobId]);
  });

  it('erases the player in every workspace with allWorkspaces', async () => {
    const userId = freshUserId();
    const spaces = await Promise.all([1, 2, 3].map((i) => ops().createWorkspace({ name: `erase-every-${i}`, plan: 'pro' })));
    for (const ws of spaces) await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 1 });
    const job = await ops().erasures.request({ userId, allWorkspaces: true });
    const done = await waitForJob(h.redis, job.jobId);
    for (const ws of spaces) {
      expect(JSON.parse(done['workspaces']!)).to.include(ws.workspaceId);
      expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    }
  });

  it('ends a game server\'s session: its next write is SESSION_LOST, and a write without one is a new player', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-session', plan: 'pro' });
    const userId = freshUserId();
    const acquired = await post(ws.apiKey, '/sessions/acquire', { userId, owner: 'server-7' });
    const sessionId = acquired.body.data.sessionId as string;
    expect((await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 100, sessionId })).status).to.equal(200);
    const job = await ops().erasures.request({ userId, workspaceId: ws.workspaceId });
    await waitForJob(h.redis, job.jobId);
    // The server still holds the player in memory and saves it: refused.
    const late = await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 100, sessionId });
    expect(late.status).to.equal(409);
    expect(late.body.code).to.equal('SESSION_LOST');
    expect(await keysOfPlayer(h.redis, ws.workspaceId, userId)).to.deep.equal([]);
    const fresh = await post(ws.apiKey, '/data/set', { userId, key: 'coins', value: 1 });
    expect(fresh.body.version).to.equal(1);
  });

  it('with a game server writing the player throughout, leaves nothing written before the erasure', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-race', plan: 'pro' });
    const userId = freshUserId();
    await post(ws.apiKey, '/data/set', { userId, key: 'old', value: 'written before' }, { 'idempotency-key': `old-${userId}` });
    await post(ws.apiKey, '/data/set', { userId, key: 'old', value: 'written before, again' });
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        n++;
        await post(ws.apiKey, '/data/set', { userId, key: 'new', value: n }, { 'idempotency-key': `new-${userId}-${n}` });
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const job = await ops().erasures.request({ userId, workspaceId: ws.workspaceId });
    const erased = await ops().erasures.run(job.jobId);
    writing = false;
    await writer;
    expect(erased.state).to.equal('done');
    expect(n).to.be.greaterThan(5);
    const data = await h.redis.hgetall(keys.player(ws.workspaceId, String(userId)));
    expect(data).to.not.have.property('old');
    expect(JSON.stringify(await h.redis.lrange(keys.playerHistory(ws.workspaceId, String(userId)), 0, -1))).to.not.include('written before');
    const oldAnswer = keys.playerIdempotency(ws.workspaceId, String(userId), createHash('sha256').update(`old-${userId}`).digest('base64url'));
    expect(await h.redis.exists(oldAnswer)).to.equal(0);
    // Whatever is left is a new player: its version counts only writes made after the erasure.
    const version = Number((await h.redis.hget(keys.player(ws.workspaceId, String(userId)), '\0v')) ?? 0);
    expect(version).to.be.lessThan(n + 2);
  });

  it('refuses an erasure from a process with another digest secret (its tombstones would never match)', async () => {
    const ws = await ops().createWorkspace({ name: 'erase-other-secret', plan: 'pro' });
    const other = testOps(h.redis, { config: testConfig({ ERASURE_DIGEST_SECRET: 'another-digest-secret-0000' }) });
    const refused = await other.erasures.request({ userId: 5, workspaceId: ws.workspaceId }).catch((err: Error & { code?: string }) => err);
    expect((refused as { code?: string }).code).to.equal('ERASURE_NOT_CONFIGURED');
    const none = testOps(h.redis, { config: testConfig({}) });
    const unset = await none.erasures.request({ userId: 5, workspaceId: ws.workspaceId }).catch((err: Error & { code?: string }) => err);
    expect((unset as { code?: string }).code).to.equal('ERASURE_NOT_CONFIGURED');
  });
});
