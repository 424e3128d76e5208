// A service killed (SIGKILL) in the middle of an erasure: the job it had taken is durable in
// Redis, and the restarted service takes it over once it has been idle ERASURE_CLAIM_IDLE_MS,
// and finishes it. The service runs as a child process on a Redis of its own, filled with a
// million keys so that a pass of the erasure (a SCAN of the keyspace) lasts long enough to be
// caught in the middle; the test checks that it was.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { keys } from '../../src/store/keys.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { spawnService, type ChildService } from '../support/child-service.js';
import { ERASURE_ENV, erasureNotification, freshGameId, freshUserId, jobState, keysOfPlayer, postWebhook, waitForJob } from '../support/erasure.js';
import { testConfig, testRedis } from '../support/service.js';

const FILLER_KEYS = 1_500_000;

describe('an erasure interrupted by a crash of the service', function () {
  this.timeout(120_000);
  let local: LocalRedis;
  let redis: Redis;
  let dir: string;
  const children: ChildService[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-erasure-crash-'));
    local = await startLocalRedis({ dataDir: dir, appendonly: false, extraArgs: ['--enable-debug-command', 'yes'] });
    redis = testRedis(local.url);
    await redis.call('DEBUG', 'POPULATE', String(FILLER_KEYS), 'filler');
  });
  after(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    redis?.disconnect();
    await local?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is finished by the restarted service', async () => {
    const env = { REDIS_URL: local.url, ...ERASURE_ENV, ERASURE_CLAIM_IDLE_MS: '1000' };
    const ops = new AdminOperations(redis, { actor: 'test', config: testConfig(env) });
    const ws = await ops.createWorkspace({ name: 'crash', plan: 'pro' });
    const gameId = freshGameId();
    await ops.erasures.setGames(ws.workspaceId, [gameId]);
    const userId = freshUserId();
    for (const value of [1, 2, 3]) await ops.setPlayerValue(ws.workspaceId, userId, 'coins', value);

    const first = await spawnService(env);
    children.push(first);
    const accepted = await postWebhook(first.baseUrl, erasureNotification(userId, [gameId]));
    expect(accepted.status, accepted.text).to.equal(200);
    const jobId = accepted.body.data.jobId as string;
    // Killed once the worker is inside the job (past its first step), not before, not after.
    const until = Date.now() + 20_000;
    while ((await jobState(redis, jobId))['phase'] !== 'keys') {
      expect(Date.now(), 'the worker never started the job').to.be.lessThan(until);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    first.process.kill('SIGKILL');
    await first.exited;
    const atCrash = await jobState(redis, jobId);
    expect(atCrash['state'], 'the job ended before the kill: nothing was interrupted').to.equal('pending');
    expect(atCrash['attempts']).to.equal('1');

    const second = await spawnService(env);
    children.push(second);
    const done = await waitForJob(redis, jobId, ['done'], 60_000);
    expect(done['attempts']).to.equal('2');
    expect(await keysOfPlayer(redis, ws.workspaceId, userId)).to.deep.equal([]);
    expect(await redis.xlen(keys.erasureStream())).to.equal(0);
    second.process.kill('SIGTERM');
    await second.exited;
  });
});
