// A burst of many-part requests (issue 27), bench/lib/burst.ts's run asserted: while workspace
// A sends its plan's whole window at once in requests made of parts each too small to be charged
// alone (many-player session calls, loads of 100 players, reads of a full inbox), workspace B on
// the same instance gets every read answered and a p99 under 150 ms, and A no 5xx.
// `npm run bench:burst` prints the same run.
import { expect } from 'chai';
import { BURST_SERVICE_ENV, runBurst } from '../bench/lib/burst.js';
import { spawnService, type ChildService } from '../test/support/child-service.js';
import { testRedisUrl } from '../test/support/hooks.js';
import { testRedis } from '../test/support/service.js';
import { report } from './report.js';

describe('a burst of many-part requests', function () {
  this.timeout(300_000);
  let child: ChildService | undefined;
  after(() => child?.process.kill('SIGKILL'));

  it("leaves another workspace served within 150 ms at p99, with none of its reads failed", async () => {
    const redis = testRedis();
    child = await spawnService({ REDIS_URL: testRedisUrl(), ...BURST_SERVICE_ENV });
    const run = await runBurst(child.baseUrl, child.process.pid!, redis);
    redis.disconnect();
    report('burst', run.figures);
    expect(run.problems).to.deep.equal([]);
  });
});
