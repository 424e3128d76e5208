// A leaderboard write whose outcome is unknown says so (issue 38, item 1): when Redis runs the
// board's script but its answer does not come back in time, the service answers 503
// OUTCOME_UNKNOWN, never the "nothing was written" of STORAGE_UNAVAILABLE, which invites a
// retry without an Idempotency-Key that would count an increment twice. Two ways: a proxy that
// holds the script's reply (exact), and Redis paused by DEBUG SLEEP during a burst of writes
// (as the issue found it: every 503 of a write that was in fact applied must say so).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy.js';
import { client, newWorkspace, startTestService } from '../support/service.js';
import type { RunningService } from '../../src/server.js';

// Long enough that, on a loaded machine, the commands before the script (the key's claim) are answered in time.
const TIMEOUT_MS = 500;
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('board writes whose outcome is unknown (OUTCOME_UNKNOWN)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let redis: LocalRedis;
  let direct: Redis;
  let proxy: RedisProxy;
  let service: RunningService;
  let api: ReturnType<typeof client>;

  before(async () => {
    // A Redis of its own, which DEBUG SLEEP may pause.
    dataDir = mkdtempSync(join(tmpdir(), 'pds-board-writes-'));
    redis = await startLocalRedis({ dataDir, extraArgs: ['--enable-debug-command', 'local'] });
    direct = new Redis(redis.url);
    const ws = await newWorkspace(direct, 'pro');
    proxy = await startRedisProxy(redis.port);
    service = await startTestService({ REDIS_URL: proxy.url, REDIS_COMMAND_TIMEOUT_MS: String(TIMEOUT_MS), RATE_LIMIT_PRO: '100000' });
    api = client(service, ws.apiKey);
    // The key cached, a lease taken and the board registered: below, only the board's script needs Redis.
    expect((await api.post('/leaderboards/wins/set', { userId: 'warm', score: 0 })).status).to.equal(200);
  });
  after(async () => {
    proxy?.release();
    await service?.close();
    await proxy?.close();
    direct?.disconnect();
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const scoreOf = async (userId: string): Promise<number | undefined> => {
    const res = await api.get(`/leaderboards/wins/players/${userId}`);
    return res.status === 200 ? (res.body.data.score as number) : undefined;
  };

  async function withReplyHeld<T>(work: () => Promise<T>): Promise<T> {
    // EVALSHA by its SHA1, or the script's text on its first call on a connection.
    const script = SCRIPTS.find((s) => s.name === 'boardWrite')!;
    proxy.holdFrom(new RegExp(`${script.sha1}|One write to a leaderboard`));
    try {
      return await work();
    } finally {
      proxy.release();
    }
  }

  it('an increment sent and not answered in time is 503 OUTCOME_UNKNOWN; its retry with the same key applies it once', async () => {
    const lost = await withReplyHeld(() => api.post('/leaderboards/wins/increment', { userId: 'u1', amount: 1 }, withKey('board-inc-1')));
    expect(lost.status).to.equal(503);
    expect(lost.body).to.include({ success: false, code: 'OUTCOME_UNKNOWN' });
    expect(lost.body.error).to.match(/same Idempotency-Key/);
    expect(lost.headers.get('retry-after')).to.equal('1');
    // It did run in Redis.
    expect(await scoreOf('u1')).to.equal(1);
    const retried = await api.post('/leaderboards/wins/increment', { userId: 'u1', amount: 1 }, withKey('board-inc-1'));
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal('true');
    expect(await scoreOf('u1')).to.equal(1);
  });

  it('a set and a delete too, without a key', async () => {
    const set = await withReplyHeld(() => api.post('/leaderboards/wins/set', { userId: 'u2', score: 7 }));
    expect(set.body.code).to.equal('OUTCOME_UNKNOWN');
    expect(await scoreOf('u2')).to.equal(7);
    const deleted = await withReplyHeld(() => api.post('/leaderboards/wins/delete', { userId: 'u2' }));
    expect(deleted.body.code).to.equal('OUTCOME_UNKNOWN');
    expect(await scoreOf('u2')).to.equal(undefined);
  });

  it('with Redis paused (DEBUG SLEEP) during a burst, no write that was applied answers STORAGE_UNAVAILABLE', async () => {
    const blocker = new Redis(redis.url);
    try {
      const sleeping = blocker.call('DEBUG', 'SLEEP', '2');
      await new Promise((r) => setTimeout(r, 50));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/leaderboards/wins/increment', { userId: `burst${i}`, amount: 1 })));
      await sleeping;
      let unknown = 0;
      for (const [i, res] of answers.entries()) {
        const applied = (await scoreOf(`burst${i}`)) === 1;
        if (res.status === 200) expect(applied, `burst${i}`).to.equal(true);
        else {
          expect(res.status, `burst${i}`).to.equal(503);
          // A write that was applied is never "nothing was written".
          if (applied) expect(res.body.code, `burst${i} was applied`).to.equal('OUTCOME_UNKNOWN');
          if (res.body.code === 'OUTCOME_UNKNOWN') unknown++;
        }
      }
      expect(unknown, 'writes sent while Redis slept').to.be.at.least(1);
    } finally {
      blocker.disconnect();
    }
  });
});
