// `npm run bench:neighbour`: the noisy-neighbour run (bench/lib/neighbour.ts) against a private
// Redis and the real service in a child process, as test-long/noisy-neighbour.test.ts runs and
// asserts it: B's p50, p99 and 5xx while A uses each heavy path, A's requests and bytes, the
// instance's memory. About three minutes. Prints one JSON line.
import { NEIGHBOUR_SERVICE_ENV, runNoisyNeighbour } from './lib/neighbour.js';
import { runMain } from './lib/bench-redis.js';
import { againstService } from './lib/service-run.js';

runMain('bench:neighbour', async () => {
  const budget = Number(process.env['WORKSPACE_BYTES_PER_SECOND'] ?? 8 * 1024 * 1024);
  const run = await againstService('neighbour', NEIGHBOUR_SERVICE_ENV, (base, pid, redis) => runNoisyNeighbour(base, pid, redis, budget));
  console.log(JSON.stringify({ ...run.figures, problems: run.problems, byteBudgetPerSecond: budget, rssIdleMb: run.rssIdleMb, rssPeakMb: run.rssPeakMb }));
});
