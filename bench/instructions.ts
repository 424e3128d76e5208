// `npm run bench:instructions`: instructions per request, counted by valgrind's callgrind, for
// the service and the Koa references. Requests/s on a shared 2-core machine move by 5-10%
// between runs of the same code, and by half between machines; an instruction count does not
// depend on what else the machine runs, so it shows a change of a few percent that requests/s
// cannot. It counts user-space work only (the process runs on one thread, below): the
// kernel's share of each socket write is not in it.
//
// Each target runs under callgrind with counting off, and node on one thread with a fixed
// young generation (NODE_FLAGS): two runs of the same build then agree within 0.5%. The
// target is warmed up with every scenario first, then each scenario's fixed number of
// requests is counted alone. The JIT's state after a different set of warm-up scenarios moves
// a count by about 5%: compare builds within one run (BENCH_COMPARE).
//
// The leaderboard scenarios (`BENCH_ONLY=board`) run on a board of BENCH_BOARD_ENTRIES (100,000:
// Node's work a request does not depend on the board's size, and Redis's is not counted),
// against their own Koa reference (references/koa-board.ts). `ref/ours` is each target's own
// reference's count over ours (issue 28's and issue 30's references); `koa/ours` is Koa + HGET's.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { control, dumpTotal, valgrindAvailable } from './lib/callgrind.js';
import { spawnTarget, type Target } from './lib/processes.js';
import { compareFlags } from './lib/start-command.js';
import { REFERENCES, round, TARGETS } from './lib/report.js';
import { BOARD_LABELS, BOARD_REFERENCES, boardScenarios, seedBoard } from './lib/boards.js';
import { REFERENCE_SCENARIO, SAVE_PLAYER, SCENARIOS, type Scenario } from './lib/scenarios.js';
import { seed, type Seeded } from './lib/seed.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const WARM_SECONDS = Number(env['BENCH_WARM'] ?? 30);
/**
 * Warm-up in requests per scenario instead of seconds, when set. A warm-up in seconds gives a
 * target under valgrind on a loaded machine too few requests: V8's optimizing compiler, on the
 * main thread here, was still at work in the counted window, 36-48% of the count in the runs of
 * 2026-11-28 (bench/RESULTS.md), and two builds' counts differed by how far each had got.
 */
const WARM_REQUESTS = env['BENCH_WARM_REQUESTS'] ? Number(env['BENCH_WARM_REQUESTS']) : undefined;
/**
 * A folder that keeps callgrind's dumps (one per scenario, `cg.<pid>.<n>`) for
 * `callgrind_annotate`; by default they go with the run's temporary folder.
 */
const KEEP_DUMPS = env['BENCH_CALLGRIND_DIR'];
const REQUESTS = Number(env['BENCH_REQUESTS'] ?? 20_000);
const WORKSPACES = Number(env['BENCH_WORKSPACES'] ?? 500);
/** Entries of the leaderboard scenarios' board (Node's work per request does not depend on it; Redis's is not counted). */
const BOARD_ENTRIES = Number(env['BENCH_BOARD_ENTRIES'] ?? 100_000);
const CONNECTIONS = 10;
const ONLY = (env['BENCH_ONLY'] ?? '').split(',').filter(Boolean);
/**
 * Node on one thread (V8's background compiler and GC threads made counts differ by 40%
 * between runs) and a young generation of fixed size (so scavenges come at the same rate).
 */
const NODE_FLAGS = ['--single-threaded', '--min-semi-space-size=16', '--max-semi-space-size=16'];
/**
 * The service's time-driven work pushed out of the counted window: the usage and last-used
 * flushes (every 5 s), key-cache refreshes (30 s) and the command timeout (1 s). Under valgrind
 * a request takes about 100 times longer, so that work, spread over about 100 times fewer
 * requests than at full speed, made a large share of each request's count that moved with
 * valgrind's speed on the day (up to 17% between runs of one build). What is left is the
 * request's own path, including its share of rate-limit leases (one per workspace and window
 * at full speed too).
 */
const HOT_PATH_ONLY = {
  USAGE_FLUSH_MS: '600000',
  KEY_LAST_USED_FLUSH_MS: '600000',
  KEY_CACHE_TTL_MS: '3600000',
  REDIS_COMMAND_TIMEOUT_MS: '60000',
};
/** Another built checkout, counted the same way after this one, for an A/B of a change. */
const COMPARE = env['BENCH_COMPARE'];
/** Node flags for the compare build only (after NODE_FLAGS in bench:instructions). */
const COMPARE_FLAGS = compareFlags();

function log(message: string): void {
  process.stderr.write(`[instructions] ${message}\n`);
}

/** Sends the scenario's requests (a fixed amount, or for some seconds); counts the answers with another status. */
async function send(target: Target, scenario: Scenario, seeded: Seeded, options: { amount?: number; seconds?: number }) {
  const result = await autocannon({
    url: target.url,
    connections: CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: options.seconds ?? 1 }),
    requests: scenario.requests(seeded),
    timeout: 30,
  });
  const byStatus: Record<string, { count?: number }> = result.statusCodeStats ?? {};
  const expected = byStatus[String(scenario.expectStatus)]?.count ?? 0;
  return { requests: result.requests.total, unexpected: result.requests.total - expected + result.errors };
}

interface Row {
  readonly target: string;
  readonly scenario: string;
  readonly requests: number;
  readonly unexpected: number;
  readonly instructionsPerRequest: number;
}

/**
 * Counts each scenario on one process: a warm-up with counting off (the JIT compiles while
 * nothing is counted; under valgrind that takes many seconds), then per scenario: counters
 * zeroed, counting on for exactly its requests, off again, and a dump.
 */
async function measure(
  name: string,
  args: string[],
  envOf: Record<string, string>,
  readyPath: string,
  scenarios: readonly Scenario[],
  seeded: Seeded,
  dir: string,
): Promise<Row[]> {
  const target = await spawnTarget({
    name,
    command: 'valgrind',
    args: [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(dir, 'cg.%p')}`,
      process.execPath,
      ...NODE_FLAGS,
      ...args,
    ],
    env: envOf,
    readyPath,
    readyTimeoutMs: 120_000,
  });
  const pid = target.process.pid!;
  const rows: Row[] = [];
  try {
    for (const scenario of scenarios) await send(target, scenario, seeded, WARM_REQUESTS ? { amount: WARM_REQUESTS } : { seconds: WARM_SECONDS });
    for (const scenario of scenarios) {
      control(pid, envOf, '-z');
      control(pid, envOf, '-i', 'on');
      const sent = await send(target, scenario, seeded, { amount: REQUESTS });
      control(pid, envOf, '-i', 'off');
      const total = await dumpTotal(dir, pid, envOf);
      const row = { target: name, scenario: scenario.name, ...sent, instructionsPerRequest: Math.round(total / sent.requests) };
      log(`${name} ${scenario.name}: ${row.instructionsPerRequest} instructions per request (${sent.requests} requests)`);
      rows.push(row);
    }
  } finally {
    await target.stop();
  }
  return rows;
}

async function main(): Promise<void> {
  if (!valgrindAvailable()) throw new Error('valgrind is not on the PATH (Debian: apt-get install valgrind)');
  const bench = await startBenchRedis('instructions', { appendfsync: 'everysec' });
  const { redis, server: redisServer } = bench;
  const cgDir = KEEP_DUMPS ?? join(bench.dataDir, 'callgrind');
  mkdirSync(cgDir, { recursive: true });
  try {
    log(`redis ${redisServer.url}; seeding ${WORKSPACES} workspaces`);
    const seeded = await seed(redis, WORKSPACES);
    // The references read the players the service reads for the same requests (references/listen.ts).
    const workspacesFile = join(bench.dataDir, 'reference-workspaces.json');
    writeFileSync(workspacesFile, JSON.stringify(Object.fromEntries(seeded.apiKeys.map((k, i) => [k, seeded.workspaceIds[i]!]))));
    // `=name` picks that name exactly; anything else, every name that contains it.
    const picked = (label: string) => ONLY.length === 0 || ONLY.some((o) => (o.startsWith('=') ? label === o.slice(1) : label.includes(o)));
    const serviceEnv = {
      REDIS_URL: redisServer.url,
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      ...HOT_PATH_ONLY,
    };
    const rows: Row[] = [];
    const scenarios = SCENARIOS.filter((s) => picked(s.name));
    if (scenarios.length > 0) {
      rows.push(...(await measure('service', [join(ROOT, 'dist/main.js')], serviceEnv, '/api/v1/ping', scenarios, seeded, cgDir)));
      if (COMPARE) {
        const compareMain = join(COMPARE, 'dist/main.js');
        rows.push(...(await measure('compare', [...COMPARE_FLAGS, compareMain], serviceEnv, '/api/v1/ping', scenarios, seeded, cgDir)));
      }
    }
    const references: Array<[string, string, Scenario]> = [
      [REFERENCES.koaHget, 'koa-hget.ts', REFERENCE_SCENARIO],
      [REFERENCES.koaSet, 'koa-set.ts', SCENARIOS.find((s) => s.name === 'set')!],
      [REFERENCES.koaIncrement, 'koa-hincrby.ts', SCENARIOS.find((s) => s.name === 'increment')!],
      [REFERENCES.koaBatch, 'koa-batch.ts', SCENARIOS.find((s) => s.name === SAVE_PLAYER.batch)!],
    ];
    for (const [label, file, scenario] of references) {
      if (!picked(label)) continue;
      const args = ['--import', 'tsx', join(ROOT, 'bench/references', file)];
      rows.push(...(await measure(label, args, { REDIS_URL: redisServer.url, REFERENCE_WORKSPACES_FILE: workspacesFile }, '/', [scenario], seeded, cgDir)));
    }

    // The leaderboard scenarios: the board seeded only when one of them is picked; the service's
    // one workspace has its limit out of reach, as in npm run bench.
    const boards = boardScenarios(BOARD_ENTRIES);
    const boardKeys = (Object.keys(BOARD_LABELS) as Array<keyof typeof BOARD_LABELS>).filter(
      (k) => picked(BOARD_LABELS[k]) || picked(BOARD_REFERENCES[k]),
    );
    if (boardKeys.length > 0) {
      log(`leaderboard: seeding a board of ${BOARD_ENTRIES} entries`);
      await seedBoard(redis, seeded.workspaceIds[0]!, BOARD_ENTRIES);
      const ours = boardKeys.filter((k) => picked(BOARD_LABELS[k])).map((k) => boards[k]);
      if (ours.length > 0) {
        const boardEnv = { ...serviceEnv, RATE_LIMIT_PRO: '1000000000' };
        rows.push(...(await measure('service', [join(ROOT, 'dist/main.js')], boardEnv, '/api/v1/ping', ours, seeded, cgDir)));
        if (COMPARE) {
          rows.push(...(await measure('compare', [...COMPARE_FLAGS, join(COMPARE, 'dist/main.js')], boardEnv, '/api/v1/ping', ours, seeded, cgDir)));
        }
      }
      for (const k of boardKeys.filter((key) => picked(BOARD_REFERENCES[key]))) {
        const args = ['--import', 'tsx', join(ROOT, 'bench/references/koa-board.ts')];
        rows.push(...(await measure(BOARD_REFERENCES[k], args, { REDIS_URL: redisServer.url }, '/', [boards[k]], seeded, cgDir)));
      }
    }

    const koa = rows.find((r) => r.target === REFERENCES.koaHget)?.instructionsPerRequest;
    /** Each scenario's own reference: the Koa server taking the same request. */
    const referenceOf = (scenario: string): string | undefined =>
      TARGETS.find((t) => t.target === scenario)?.reference ??
      (Object.keys(BOARD_LABELS) as Array<keyof typeof BOARD_LABELS>).map((k) => (BOARD_LABELS[k] === scenario ? BOARD_REFERENCES[k] : undefined)).find(Boolean);
    const lines = [`${'target'.padEnd(44)} ${'instr/req'.padStart(10)} ${'koa/ours'.padStart(9)} ${'ref/ours'.padStart(9)} ${'bad'.padStart(5)}`];
    for (const r of rows) {
      const label = r.target === 'service' ? r.scenario : r.target === 'compare' ? `${r.scenario} [compare]` : `${r.target} (${r.scenario})`;
      const ratio = koa ? round(koa / r.instructionsPerRequest).toFixed(2) : '-';
      const referenceLabel = r.target === 'service' || r.target === 'compare' ? referenceOf(r.scenario) : undefined;
      const reference = referenceLabel && rows.find((x) => x.target === referenceLabel)?.instructionsPerRequest;
      const ownRatio = reference ? round(reference / r.instructionsPerRequest).toFixed(2) : '-';
      lines.push(
        `${label.padEnd(44)} ${String(r.instructionsPerRequest).padStart(10)} ${ratio.padStart(9)} ${ownRatio.padStart(9)} ${String(r.unexpected).padStart(5)}`,
      );
    }
    const table = lines.join('\n');
    process.stdout.write(`\n${table}\n`);
    const outDir = join(ROOT, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, ONLY.length > 0 ? 'instructions.tmp.json' : 'instructions.json');
    const report = {
      date: new Date().toISOString(),
      node: process.version,
      settings: { warmSeconds: WARM_REQUESTS ? undefined : WARM_SECONDS, warmRequests: WARM_REQUESTS, requests: REQUESTS, workspaces: WORKSPACES, connections: CONNECTIONS, only: ONLY },
      rows,
      table,
    };
    writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
    log(`wrote ${file}`);
  } finally {
    await bench.close();
  }
}

runMain('instructions', main);
