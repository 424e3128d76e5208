// `npm run bench:neighbour`: the noisy-neighbour run (bench/lib/neighbour.ts) against a private
// Redis and the real service in a child process, as test-long/noisy-neighbour.test.ts runs and
// asserts it: B's p50, p99 and 5xx while A uses each heavy path, A's requests and bytes, the
// instance's memory. About three minutes. Prints one JSON line.
import { NEIGHBOUR_SERVICE_ENV, runNoisyNeighbour } from './lib/neighbour.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { spawnTarget } from './lib/processes.js';

runMain('bench:neighbour', async () => {
  const bench = await startBenchRedis('neighbour');
  const service = await spawnTarget({
    name: 'service',
    args: ['--import', 'tsx', 'src/main.ts'],
    env: { REDIS_URL: bench.server.url, HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production', ...NEIGHBOUR_SERVICE_ENV },
    readyPath: '/api/v1/ping',
  });
  try {
    const budget = Number(process.env['WORKSPACE_BYTES_PER_SECOND'] ?? 8 * 1024 * 1024);
    const run = await runNoisyNeighbour(`${service.url}/api/v1`, service.process.pid!, bench.redis, budget);
    console.log(JSON.stringify({ ...run.figures, problems: run.problems, byteBudgetPerSecond: budget, rssIdleMb: run.rssIdleMb, rssPeakMb: run.rssPeakMb }));
  } finally {
    await service.stop();
    await bench.close();
  }
});
