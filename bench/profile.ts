// `npm run bench:profile`: the production build under the mixed load with --cpu-prof, then a
// summary of where its CPU went (self time by module and by function). The raw profile is
// left in bench/results/profile/ for Chrome DevTools or speedscope. Options: BENCH_SCENARIO
// (mix), BENCH_DURATION seconds (10), BENCH_CONNECTIONS (50; 4 for the light load).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { runLoad } from './lib/load.js';
import { spawnTarget } from './lib/processes.js';
import { startFlags } from './lib/start-command.js';
import { summarize } from './lib/profile-summary.js';
import { SCENARIOS } from './lib/scenarios.js';
import { seed } from './lib/seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCENARIO = process.env['BENCH_SCENARIO'] ?? 'mix';
const SECONDS = Number(process.env['BENCH_DURATION'] ?? 10);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);

async function main(): Promise<void> {
  const outDir = join(ROOT, 'bench/results/profile');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const bench = await startBenchRedis('profile');
  const { redis } = bench;
  try {
    const seeded = await seed(redis, 2000);
    const service = await spawnTarget({
      name: 'service',
      args: [...startFlags(ROOT), '--cpu-prof', `--cpu-prof-dir=${outDir}`, join(ROOT, 'dist/main.js')],
      env: { REDIS_URL: bench.server.url, HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production' },
      readyPath: '/api/v1/ping',
    });
    const scenario = SCENARIOS.find((s) => s.name === SCENARIO);
    if (!scenario) throw new Error(`no scenario ${SCENARIO}`);
    const result = await runLoad(service, scenario, seeded, { connections: CONNECTIONS, durationSeconds: SECONDS }, redis);
    await service.stop();
    const file = readdirSync(outDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no profile');
    const summary = summarize(join(outDir, file));
    writeFileSync(join(outDir, 'summary.json'), JSON.stringify({ scenario: SCENARIO, result, summary }, null, 2) + '\n');
    process.stdout.write(
      `${SCENARIO}: ${Math.round(result.requestsPerSecond)} req/s at ${CONNECTIONS} connections under --cpu-prof\n\nself time by module:\n`,
    );
    for (const m of summary.byModule) process.stdout.write(`  ${String(m.percent).padStart(5)}%  ${m.module}\n`);
    process.stdout.write('\nself time by function:\n');
    for (const f of summary.byFunction) process.stdout.write(`  ${String(f.percent).padStart(5)}%  ${f.fn}\n`);
  } finally {
    await bench.close();
  }
}

runMain('profile', main);
