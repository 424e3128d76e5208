// Two service processes on one Redis: 10,000 concurrent increments (200 in flight) of one key
// end exact. (The normal run does 2,000: test/reliability/process-faults.test.ts.)
import { expect } from 'chai';
import { decodeEntry } from '../src/domain/entry.js';
import { keys } from '../src/store/keys.js';
import { incrementOneKey, spawnService, type ChildService } from '../test/support/child-service.js';
import { testRedisUrl } from '../test/support/hooks.js';
import { newWorkspace, testRedis } from '../test/support/service.js';
import { report } from './report.js';

describe('two service processes on one Redis', function () {
  this.timeout(180_000);
  const children: ChildService[] = [];
  after(() => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
  });

  it('10,000 concurrent increments of one key end exact', async () => {
    const redis = testRedis();
    const ws = await newWorkspace(redis, 'pro');
    const env = { REDIS_URL: testRedisUrl(), RATE_LIMIT_PRO: '1000000000' };
    children.push(...(await Promise.all([spawnService(env), spawnService(env)])));
    const result = await incrementOneKey(children.map((c) => c.baseUrl), ws.apiKey, 10_000, 200);
    const stored = decodeEntry((await redis.hget(keys.player(ws.workspaceId, 'shared'), 'count'))!);
    redis.disconnect();
    report('two-processes', { increments: result.statuses.length, non200: result.statuses.filter((s) => s !== 200).length, final: stored?.valueJson, ms: result.ms });
    expect(result.statuses.every((s) => s === 200)).to.equal(true);
    expect(stored!.valueJson).to.equal('10000');
  });
});
