// `npm run bench:burst`: bench/lib/burst.ts's run (a plan's whole window of many-part requests
// at once, against a neighbour) against a private Redis and the real service in a child process,
// as test-long/burst.test.ts runs and asserts it. About a minute. Prints one JSON line.
import { BURST_SERVICE_ENV, runBurst } from './lib/burst.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { spawnTarget } from './lib/processes.js';

runMain('bench:burst', async () => {
  const bench = await startBenchRedis('burst');
  const service = await spawnTarget({
    name: 'service',
    args: ['--import', 'tsx', 'src/main.ts'],
    env: { REDIS_URL: bench.server.url, HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production', ...BURST_SERVICE_ENV },
    readyPath: '/api/v1/ping',
  });
  try {
    const run = await runBurst(`${service.url}/api/v1`, service.process.pid!, bench.redis);
    console.log(JSON.stringify({ ...run.figures, problems: run.problems }));
  } finally {
    await service.stop();
    await bench.close();
  }
});
