// ERASURE_AOF_REWRITE_HOURS: after an erasure the service makes Redis rewrite its append-only
// file, so the erased value leaves the files on disk, and it does so at most once per interval.
// A Redis of the test's own with AOF on (appendfsync always, so the value is on disk at once);
// the AOF's files are read before and after.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { ERASURE_ENV, freshUserId, waitForJob } from '../support/erasure.js';
import { startTestService, testConfig, testRedis } from '../support/service.js';

function aofText(dir: string): string {
  const aofDir = join(dir, 'appendonlydir');
  return readdirSync(aofDir)
    .map((name) => readFileSync(join(aofDir, name)).toString('latin1'))
    .join('\n');
}

async function rewrites(redis: Redis): Promise<{ count: number; running: boolean }> {
  const info = await redis.info('persistence');
  const running = /aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(info);
  return { count: Number(/aof_rewrites:(\d+)/.exec(info)?.[1] ?? 0), running };
}

describe('erasure: the AOF rewrite after erasures (ERASURE_AOF_REWRITE_HOURS)', function () {
  this.timeout(60_000);
  let local: LocalRedis;
  let redis: Redis;
  let service: RunningService;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-erasure-aof-'));
    local = await startLocalRedis({ dataDir: dir, appendfsync: 'always' });
    redis = testRedis(local.url);
    service = await startTestService({ REDIS_URL: local.url, ...ERASURE_ENV, ERASURE_AOF_REWRITE_HOURS: '1' });
  });
  after(async () => {
    await service?.close();
    redis?.disconnect();
    await local?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('rewrites the AOF after an erasure, so the erased value is in no file, and not again within the hour', async () => {
    const ops = new AdminOperations(redis, { actor: 'test', config: testConfig({ REDIS_URL: local.url, ...ERASURE_ENV }) });
    const ws = await ops.createWorkspace({ name: 'aof', plan: 'pro' });
    const userId = freshUserId();
    const marker = `erase-me-${userId}`;
    await ops.setPlayerValue(ws.workspaceId, userId, 'secret', marker);
    expect(aofText(dir)).to.include(marker);
    const before = await rewrites(redis);

    const job = await ops.erasures.request({ userId, workspaceId: ws.workspaceId });
    await waitForJob(redis, job.jobId);
    const until = Date.now() + 20_000;
    for (;;) {
      const now = await rewrites(redis);
      if (now.count > before.count && !now.running) break;
      expect(Date.now(), 'no AOF rewrite after the erasure').to.be.lessThan(until);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Redis deletes the old files once the rewrite is done; give it a moment.
    const gone = Date.now() + 5000;
    while (aofText(dir).includes(marker) && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(aofText(dir)).to.not.include(marker);

    const counted = (await rewrites(redis)).count;
    const second = await ops.erasures.request({ userId: userId + 1, workspaceId: ws.workspaceId });
    await waitForJob(redis, second.jobId);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await rewrites(redis)).count).to.equal(counted);
    // Due again, for the rewrite once the hour is over.
    expect(await redis.exists(keys.erasureRewriteDue())).to.equal(1);
  });
});
