// A write whose outcome is unknown says so: when Redis runs the write but its answer does not
// come back in time (a proxy holds Redis's replies past REDIS_COMMAND_TIMEOUT_MS), the service
// answers 503 OUTCOME_UNKNOWN, never the "nothing happened" of STORAGE_UNAVAILABLE; a retry with
// the same Idempotency-Key applies it exactly once; and the workspace's storage totals, which
// never heard of such writes, are recounted from the players within seconds, the quota holding
// meanwhile.
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { sumPlayerSizes } from '../../src/store/players/player-sizes.js';
import { estimatedRedisBytes } from '../../src/store/players/redis-memory.js';
import { readStorageTotals } from '../../src/store/workspaces/storage-usage.js';
import { testRedisUrl } from '../support/hooks.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, startTestService } from '../support/service.js';
import type { RunningService } from '../../src/server.js';
import type { CreatedWorkspace } from '../../src/admin/operations.js';

const TIMEOUT_MS = 200;
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a write whose outcome is unknown (OUTCOME_UNKNOWN)', function () {
  this.timeout(60_000);
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let ws: CreatedWorkspace;
  let api: ReturnType<typeof client>;

  before(async () => {
    direct = new Redis(testRedisUrl());
    // Made before the service subscribes (test/saves/idempotency.test.ts says why); a small
    // quota, so that a write over it shows whether the unknown writes were counted.
    ws = await newWorkspace(direct, 'free');
    proxy = await startRedisProxy(Number(new URL(testRedisUrl()).port));
    service = await startTestService({
      REDIS_URL: proxy.url,
      REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS),
      STORAGE_QUOTA_FREE_BYTES: String(2_000_000),
      RATE_LIMIT_FREE: '1000',
    });
    api = client(service, ws.apiKey);
    // The key cached and a lease taken: the writes below need Redis for themselves only.
    for (let i = 0; i < 3; i++) expect((await api.get('/data?userId=warm&key=k')).status).to.equal(404);
  });
  after(async () => {
    proxy.release();
    await service?.close();
    await proxy?.close();
    direct.disconnect();
  });

  /**
   * Holds Redis's replies from the player's script on (what comes before is answered: the
   * rate limit's lease, the idempotency claim, whose own timeouts would mean the write was
   * never sent) while `work` runs, past the command timeout; then lets them through.
   */
  async function withRepliesHeld<T>(work: () => Promise<T>): Promise<T> {
    // EVALSHA by its SHA1, or the script's text itself: ioredis sends EVAL on a script's first call on a connection.
    const [write, session] = ['writePlayer', 'playerSession'].map((name) => SCRIPTS.find((s) => s.name === name)!);
    proxy.holdFrom(new RegExp([write!.sha1, session!.sha1, 'Apply a player.s write', 'Acquire, renew or release'].join('|')));
    try {
      return await work();
    } finally {
      proxy.release();
    }
  }

  it('answers 503 OUTCOME_UNKNOWN with Retry-After, and its retry with the same key applies it once', async () => {
    const body = { userId: 'u1', key: 'coins', amount: 5 };
    const lost = await withRepliesHeld(() => api.post('/data/increment', body, withKey('inc-1')));
    expect(lost.status).to.equal(503);
    expect(lost.body).to.include({ success: false, code: 'OUTCOME_UNKNOWN' });
    expect(lost.body.error).to.match(/may or may not have been applied/).and.match(/same Idempotency-Key/);
    expect(lost.headers.get('retry-after')).to.equal('1');
    // It did run in Redis:
    expect(JSON.parse((await direct.hget(keys.player(ws.workspaceId, 'u1'), 'coins'))!)[1]).to.equal(5);
    const retried = await api.post('/data/increment', body, withKey('inc-1'));
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal('true');
    expect(retried.body).to.deep.equal({ success: true, value: 5, version: 1 });
    expect((await api.get('/data?userId=u1&key=coins')).body.data.value).to.equal(5);
  });

  it('a session call too, and a batch of many players', async () => {
    const acquire = await withRepliesHeld(() => api.post('/sessions/acquire', { userId: 'u2', owner: 'job-A' }, withKey('acq-1')));
    expect(acquire.body.code).to.equal('OUTCOME_UNKNOWN');
    const again = await api.post('/sessions/acquire', { userId: 'u2', owner: 'job-A' }, withKey('acq-1'));
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');

    const players = [3, 4, 5].map((n) => ({ userId: `u${n}`, ops: [{ op: 'increment', key: 'n', amount: 1 }] }));
    // Answered per player (docs/safe-saves.md): the first sent and unanswered, the others on the
    // same Redis not sent after it; the request's answer is 200 with their Retry-After.
    const batch = await withRepliesHeld(() => api.post('/data/batch', { players }, withKey('many-1')));
    expect(batch.status).to.equal(200);
    expect(batch.headers.get('retry-after')).to.equal('1');
    expect(batch.body.data.players.map((p: { code: string }) => p.code)).to.deep.equal(['OUTCOME_UNKNOWN', 'STORAGE_UNAVAILABLE', 'STORAGE_UNAVAILABLE']);
    expect(batch.body.data.players.map((p: { status: number }) => p.status)).to.deep.equal([503, 503, 503]);
    const retried = await api.post('/data/batch', { players }, withKey('many-1'));
    expect(retried.status).to.equal(200);
    expect(retried.body.data.players.map((p: { success: boolean }) => p.success)).to.deep.equal([true, true, true]);

    // A many-player acquire likewise: its players' scripts go side by side, each sent, none answered.
    const many = { players: ['u6', 'u7'], owner: 'job-A' };
    const acquired = await withRepliesHeld(() => api.post('/sessions/acquire', many, withKey('acq-many')));
    expect(acquired.status).to.equal(200);
    expect(acquired.headers.get('retry-after')).to.equal('1');
    expect(acquired.body.data.players.map((p: { code: string }) => p.code)).to.deep.equal(['OUTCOME_UNKNOWN', 'OUTCOME_UNKNOWN']);
    const acquiredAgain = await api.post('/sessions/acquire', many, withKey('acq-many'));
    expect(acquiredAgain.status).to.equal(200);
    expect(acquiredAgain.headers.get('idempotent-replayed')).to.equal('true');
    expect(acquiredAgain.body.data.players.map((p: { owner: string }) => p.owner)).to.deep.equal(['job-A', 'job-A']);
    for (const n of [3, 4, 5]) expect((await api.get(`/data?userId=u${n}&key=n`)).body.data.value).to.equal(1);
  });

  it('counts such writes at once (the quota holds), and recounts the workspace from its players within seconds', async () => {
    const value = 'x'.repeat(100_000);
    const entry = 100_000 + 50; // a set of it, as the quota counts it (key, JSON string, time)
    // 15 sets of 100 KB at once, replies held from the first script on: those whose script was
    // sent answer OUTCOME_UNKNOWN and were applied; those still waiting for a lease answer
    // STORAGE_UNAVAILABLE and were not. Neither reports what it stored.
    const lost = await withRepliesHeld(() =>
      Promise.all(Array.from({ length: 15 }, (_, i) => api.post('/data/set', { userId: `big${i}`, key: 'v', value }))),
    );
    let unknown = 0;
    for (const [i, res] of lost.entries()) {
      expect(res.body.code).to.be.oneOf(['OUTCOME_UNKNOWN', 'STORAGE_UNAVAILABLE']);
      const written = (await direct.exists(keys.player(ws.workspaceId, `big${i}`))) === 1;
      expect(written, `big${i}: ${res.body.code}`).to.equal(res.body.code === 'OUTCOME_UNKNOWN');
      if (written) unknown += 1;
    }
    expect(unknown).to.be.at.least(3);
    // Counted at once, as if applied: further 100 KB sets are refused once those and the
    // unknown ones reach the 2 MB quota, not 'unknown' sets later.
    let accepted = 0;
    for (let i = 0; i < 30; i++) {
      const res = await api.post('/data/set', { userId: `more${i}`, key: 'v', value });
      if (res.status === 403) break;
      expect(res.status).to.equal(200);
      accepted += 1;
    }
    // As the quota weighs them: Redis bytes (1.2 x counted + 150 B a player known to have data).
    const counted = estimatedRedisBytes((unknown + accepted) * entry, accepted);
    const one = estimatedRedisBytes(entry, 1);
    expect(counted, `${unknown} unknown + ${accepted} accepted`).to.be.within(2_000_000 - one, 2_000_000 + 2 * one);
    // Within seconds, the totals are what the players hold, whatever the guess was.
    const deadline = Date.now() + 20_000;
    const playersCounted = async () => {
      const totals = await readStorageTotals(direct, ws.workspaceId);
      return { bytes: totals.bytes - totals.keptBytes - totals.boardBytes - totals.messageBytes - totals.sessionBytes, historyBytes: totals.historyBytes, players: totals.players };
    };
    let totals = await playersCounted();
    let held = await sumPlayerSizes(direct, ws.workspaceId);
    while (Date.now() < deadline && (totals.bytes !== held.bytes || totals.historyBytes !== held.historyBytes || totals.players !== held.players)) {
      await sleep(250);
      totals = await playersCounted();
      held = await sumPlayerSizes(direct, ws.workspaceId);
    }
    expect(totals).to.deep.equal(held);
    expect(held.bytes).to.be.above(1_500_000);
  });
});
