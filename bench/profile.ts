// `npm run bench:profile`: the production build under one scenario's load with --cpu-prof, then a
// summary of where its CPU went (self time by module and by function). With BENCH_REFERENCE=1,
// the scenario's Koa reference (the server taking the same request with one Redis command) is
// profiled the same way after it, so the two can be read side by side. The raw profiles are left
// in bench/results/profile/ for Chrome DevTools or speedscope. Options: BENCH_SCENARIO (mix; a
// scenario of lib/scenarios.ts, or a leaderboard one: `board top100`, `board rank`, `board
// increment`), BENCH_DURATION seconds (10), BENCH_CONNECTIONS (50; 4 for the light load),
// BENCH_REFERENCE (1 to profile the reference too), BENCH_BOARD_ENTRIES (100000, for a
// leaderboard scenario).
//
// Each function's share is of the busy samples (idle left out), and `µs/req` is that share of the
// process's CPU a request (user + system, from /proc): system time (the socket's syscalls) has no
// JavaScript function, so it falls on `(program)` and the natives that made the calls.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { BOARD_LABELS, boardScenarios, seedBoard } from './lib/boards.js';
import { runLoad, type RunResult } from './lib/load.js';
import { spawnTarget } from './lib/processes.js';
import { REFERENCES, TARGETS } from './lib/report.js';
import { startFlags } from './lib/start-command.js';
import { summarize, type ProfileSummary } from './lib/profile-summary.js';
import { REFERENCE_SCENARIO, SCENARIOS, type Scenario } from './lib/scenarios.js';
import { seed } from './lib/seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCENARIO = process.env['BENCH_SCENARIO'] ?? 'mix';
const SECONDS = Number(process.env['BENCH_DURATION'] ?? 10);
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? 50);
const WITH_REFERENCE = process.env['BENCH_REFERENCE'] === '1';
const BOARD_ENTRIES = Number(process.env['BENCH_BOARD_ENTRIES'] ?? 100_000);

/** The scenario, and its reference's file and scenario (the same requests, or get's for Koa + HGET). */
function pick(): { scenario: Scenario; board: boolean; reference?: { file: string; scenario: Scenario } } {
  const boardKey = (Object.keys(BOARD_LABELS) as Array<keyof typeof BOARD_LABELS>).find((k) => BOARD_LABELS[k] === SCENARIO);
  if (boardKey) {
    const scenario = boardScenarios(BOARD_ENTRIES)[boardKey];
    return { scenario, board: true, reference: { file: 'koa-board.ts', scenario } };
  }
  const scenario = SCENARIOS.find((s) => s.name === SCENARIO);
  if (!scenario) throw new Error(`no scenario ${SCENARIO}`);
  const target = TARGETS.find((t) => t.target === SCENARIO);
  const files: Record<string, string> = {
    [REFERENCES.koaHget]: 'koa-hget.ts',
    [REFERENCES.koaSet]: 'koa-set.ts',
    [REFERENCES.koaIncrement]: 'koa-hincrby.ts',
    [REFERENCES.koaBatch]: 'koa-batch.ts',
  };
  if (!target) return { scenario, board: false };
  const file = files[target.reference]!;
  return { scenario, board: false, reference: { file, scenario: target.reference === REFERENCES.koaHget ? REFERENCE_SCENARIO : scenario } };
}

function print(title: string, result: RunResult, summary: ProfileSummary): void {
  const cpu = result.cpuMicrosPerRequest;
  const micros = (percent: number) => ((percent / summary.busyPercent) * cpu).toFixed(1).padStart(6);
  process.stdout.write(
    `\n${title}: ${Math.round(result.requestsPerSecond)} req/s at ${CONNECTIONS} connections under --cpu-prof, ` +
      `${Math.round(cpu)} µs of CPU a request, busy in ${summary.busyPercent}% of the samples; ` +
      `Redis ${Math.round(result.redisMicrosPerRequest)} µs of CPU and ${result.redisCommandsPerRequest.toFixed(2)} commands a request; ` +
      `system calls a request: ${result.syscallReadsPerRequest.toFixed(2)} reads, ${result.syscallWritesPerRequest.toFixed(2)} writes\n\n  µs/req  self time by module:\n`,
  );
  for (const m of summary.byModule) if (m.module !== '(idle)') process.stdout.write(`  ${micros(m.percent)}  ${m.module}\n`);
  process.stdout.write('\n  µs/req  self time by function:\n');
  for (const f of summary.byFunction) if (!f.fn.startsWith('(idle)')) process.stdout.write(`  ${micros(f.percent)}  ${f.fn}\n`);
  // Commands inside scripts are counted by their own names too (INFO commandstats).
  const byName = Object.entries(result.redisCommands).filter(([, n]) => n >= 0.001).sort((a, b) => b[1] - a[1]);
  process.stdout.write(`\n  Redis commands a request, by name: ${byName.map(([name, n]) => `${name} ${n}`).join(', ')}\n`);
}

async function main(): Promise<void> {
  const outDir = join(ROOT, 'bench/results/profile');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const bench = await startBenchRedis('profile');
  const { redis } = bench;
  const { scenario, board, reference } = pick();
  try {
    const seeded = await seed(redis, board ? 10 : 2000);
    if (board) await seedBoard(redis, seeded.workspaceIds[0]!, BOARD_ENTRIES);
    const profiled = async (name: string, args: string[], env: Record<string, string>, readyPath: string, which: Scenario) => {
      const dir = join(outDir, name);
      mkdirSync(dir);
      const target = await spawnTarget({ name, args: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...args], env, readyPath });
      const result = await runLoad(target, which, seeded, { connections: CONNECTIONS, durationSeconds: SECONDS }, redis);
      await target.stop();
      const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`${name} wrote no profile`);
      return { result, summary: summarize(join(dir, file)) };
    };
    const serviceEnv = {
      REDIS_URL: bench.server.url,
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      ...(board ? { RATE_LIMIT_PRO: '1000000000' } : {}),
    };
    const service = await profiled('service', [...startFlags(ROOT), join(ROOT, 'dist/main.js')], serviceEnv, '/api/v1/ping', scenario);
    const out: Record<string, unknown> = { scenario: SCENARIO, service };
    print(SCENARIO, service.result, service.summary);
    if (WITH_REFERENCE && reference) {
      const args = ['--import', 'tsx', join(ROOT, 'bench/references', reference.file)];
      const workspacesFile = join(outDir, 'reference-workspaces.json');
      writeFileSync(workspacesFile, JSON.stringify(Object.fromEntries(seeded.apiKeys.map((k, i) => [k, seeded.workspaceIds[i]!]))));
      const ref = await profiled('reference', args, { REDIS_URL: bench.server.url, REFERENCE_WORKSPACES_FILE: workspacesFile }, '/', reference.scenario);
      out['reference'] = { file: reference.file, ...ref };
      print(`reference ${reference.file}`, ref.result, ref.summary);
    }
    writeFileSync(join(outDir, 'summary.json'), JSON.stringify(out, null, 2) + '\n');
  } finally {
    await bench.close();
  }
}

runMain('profile', main);
