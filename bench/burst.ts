// `npm run bench:burst`: bench/lib/burst.ts's run (a plan's whole window of many-part requests
// at once, against a neighbour) against a private Redis and the real service in a child process,
// as test-long/burst.test.ts runs and asserts it. About a minute. Prints one JSON line.
import { BURST_SERVICE_ENV, runBurst } from './lib/burst.js';
import { runMain } from './lib/bench-redis.js';
import { againstService } from './lib/service-run.js';

runMain('bench:burst', async () => {
  const run = await againstService('burst', BURST_SERVICE_ENV, runBurst);
  console.log(JSON.stringify({ ...run.figures, problems: run.problems }));
});
