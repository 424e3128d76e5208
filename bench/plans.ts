// `npm run bench:plans`: what a plan carries. Starts a private Redis and the production build
// of the service (as `npm run bench` does) with its rate-limit window scaled down by the same
// factor as the simulated clock, so that a plan's budget per simulated second is the real one
// (300 or 60 requests per 10 simulated seconds). Then, for each request pattern and plan, it
// searches for the largest number of concurrent players with no 429 and no lost save (steps
// of x1.5 from a start near the expected figure, then bisection), each run on a fresh
// workspace (bench/lib/plans/simulate.ts). The shutdown falls late in a window, the unlucky
// case for a plan.
//
// Options (environment, all optional): BENCH_PLANS_SPEEDUP (10: a 15-minute session takes 90 s,
// the window is 1 s; x20 made every stall of a busy machine 20 times longer in simulated time),
// BENCH_PLANS_STEADY_MINUTES (4: simulated minutes at full population before the shutdown),
// BENCH_PLANS_COLD=1 (no warm start: the population ramps up over the first 15 minutes, and
// the steady minutes follow), BENCH_PLANS_PATTERNS (session,key-by-key,session-close-now),
// BENCH_PLANS_PLANS (pro,free), BENCH_PLANS_PRECISION (0.1: stop when the first failing count
// is within 10% of the last passing one), BENCH_PLANS_PLAYERS (a list of counts: run each once
// instead of searching), BENCH_PLANS_MAX_RUNS (6 per search), BENCH_PLANS_DEBUG=1 (each lost
// save's values, and the requests per second around the shutdown). The shipped Luau layer's
// parts (session-close-now), changed to measure what each buys: BENCH_PLANS_SHUTDOWN_SPREAD
// (10 s), BENCH_PLANS_SHUTDOWN_SECONDS (25), BENCH_PLANS_JOIN_BATCH (0.25 s),
// BENCH_PLANS_CARRY=0 (a close carries no auto-save). A run fails on a 429, a
// lost save, a failed join, a session left held, or more requests in any 10 simulated seconds
// than the budget (SimStats.peakSlidingWindow says why). Results: bench/results/plans.json
// (plans-partial.tmp.json when the options narrow the search); docs/performance-plans.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminOperations } from '../src/admin/operations.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { SHIPPED, type LayerOptions } from './lib/plans/session-layer.js';
import { simulate, type Pattern, type SimResult } from './lib/plans/simulate.js';
import { spawnTarget } from './lib/processes.js';
import { round } from './lib/report.js';
import { startFlags } from './lib/start-command.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const num = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
const list = (name: string, fallback: string) => (env[name] || fallback).split(',').map((s) => s.trim()).filter(Boolean);

const SPEEDUP = num('BENCH_PLANS_SPEEDUP', 10);
const STEADY_MINUTES = num('BENCH_PLANS_STEADY_MINUTES', 4);
const WARM = env['BENCH_PLANS_COLD'] !== '1';
const PATTERNS = list('BENCH_PLANS_PATTERNS', 'session,key-by-key,session-close-now') as Pattern[];
const PLANS = list('BENCH_PLANS_PLANS', 'pro,free') as Array<'pro' | 'free'>;
const PRECISION = num('BENCH_PLANS_PRECISION', 0.1);
const FIXED = list('BENCH_PLANS_PLAYERS', '').map(Number);
const MAX_RUNS = num('BENCH_PLANS_MAX_RUNS', 6);
/** The shipped layer's parts, changed to measure what each buys (session-close-now only). */
const SHIPPED_CHANGES: Partial<LayerOptions> = {
  ...(env['BENCH_PLANS_SHUTDOWN_SPREAD'] ? { shutdownSpreadSeconds: Number(env['BENCH_PLANS_SHUTDOWN_SPREAD']) } : {}),
  ...(env['BENCH_PLANS_SHUTDOWN_SECONDS'] ? { shutdownSeconds: Number(env['BENCH_PLANS_SHUTDOWN_SECONDS']) } : {}),
  ...(env['BENCH_PLANS_JOIN_BATCH'] ? { joinBatchSeconds: Number(env['BENCH_PLANS_JOIN_BATCH']) } : {}),
  ...(env['BENCH_PLANS_CARRY'] ? { carryOnClose: env['BENCH_PLANS_CARRY'] !== '0' } : {}),
};
const PLAN_BUDGET = { pro: 300, free: 60 } as const;

/** Where each search starts: near the arithmetic of docs/performance-plans.md, to save runs. */
const START: Record<Pattern, Record<'pro' | 'free', number>> = {
  session: { pro: 6000, free: 1200 },
  'session-close-now': { pro: 8400, free: 1650 },
  'key-by-key': { pro: 40, free: 8 },
};

function log(message: string): void {
  process.stderr.write(`[bench:plans] ${message}\n`);
}

interface Search {
  readonly pattern: Pattern;
  readonly plan: 'pro' | 'free';
  /** Largest count that passed (no 429, no lost save, every session released). */
  readonly capacity: number | null;
  /** Smallest count that failed. */
  readonly firstFailing: number | null;
  readonly runs: SimResult[];
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  const bench = await startBenchRedis('plans', { appendfsync: 'everysec' });
  const windowMs = Math.round(10_000 / SPEEDUP);
  const service = await spawnTarget({
    name: 'service',
    args: [...startFlags(ROOT), join(ROOT, 'dist/main.js')],
    env: {
      REDIS_URL: bench.server.url,
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      RATE_LIMIT_WINDOW_MS: String(windowMs),
      RATE_LIMIT_PRO: String(PLAN_BUDGET.pro),
      RATE_LIMIT_FREE: String(PLAN_BUDGET.free),
    },
    readyPath: '/api/v1/ping',
    // Its warnings (5xx causes) belong in the run's record.
    stdout: 'inherit',
  });
  const ops = new AdminOperations(bench.redis);
  let workspaces = 0;
  const run = async (pattern: Pattern, plan: 'pro' | 'free', players: number): Promise<SimResult> => {
    const id = `plans-${++workspaces}`;
    const { apiKey } = await ops.createWorkspace({ name: `plans ${pattern} ${plan} ${players}`, plan, id });
    log(`${pattern} on ${plan}: ${players} players ...`);
    const result = await simulate({
      players,
      pattern,
      baseUrl: service.url,
      apiKey,
      workspaceId: id,
      redis: bench.redis,
      speedup: SPEEDUP,
      steadyMinutes: STEADY_MINUTES,
      warmStart: WARM,
      windowMs,
      budget: PLAN_BUDGET[plan],
      shipped: SHIPPED_CHANGES,
    });
    log(
      `  ${result.ok ? 'ok' : 'FAIL'}: ${result.requests} requests, ${result.rateLimited} x 429, ${result.lostSaves} lost, ` +
        `${result.failedJoins} failed joins, ${result.unreleasedSessions} unreleased; peak ${result.peakWindowRequests} in 10 s ` +
        `(${result.peakSteadyWindowRequests}/window before the shutdown), ` +
        `${result.shutdownRequests} at shutdown; ${result.realSeconds} s` +
        (result.failures.length ? `; ${result.failures.slice(0, 3).join(' | ')}` : '') +
        (result.unexpected.length ? `; unexpected: ${JSON.stringify(result.unexpected.slice(0, 3))}` : ''),
    );
    return result;
  };

  const searches: Search[] = [];
  try {
    for (const plan of PLANS) {
      for (const pattern of PATTERNS) {
        const runs: SimResult[] = [];
        let lo: number | null = null;
        let hi: number | null = null;
        const step = async (players: number) => {
          const r = await run(pattern, plan, players);
          runs.push(r);
          if (r.ok) lo = Math.max(lo ?? 0, players);
          else hi = Math.min(hi ?? Infinity, players);
        };
        if (FIXED.length > 0) {
          for (const players of FIXED) await step(players);
        } else {
          let next = START[pattern][plan];
          while (runs.length < MAX_RUNS) {
            await step(next);
            if (lo !== null && hi !== null) {
              if ((hi - lo) / lo <= PRECISION || hi - lo <= 1) break;
              next = roundCount((lo + hi) / 2);
            } else {
              next = lo === null ? Math.max(1, roundCount(next / 1.5)) : roundCount(next * 1.5);
            }
          }
        }
        searches.push({ pattern, plan, capacity: lo, firstFailing: hi, runs });
      }
    }
  } finally {
    await service.stop();
    await bench.close();
  }

  const printed = tableOf(searches);
  process.stdout.write(`\n${printed}\n`);
  const report = {
    date: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      loadAverageAtStart: round(loadAtStart),
      loadAverageAtEnd: loadavg().map((n) => round(n)),
      busy: loadAtStart > cpus().length * 0.5,
    },
    settings: {
      speedup: SPEEDUP,
      rateLimitWindowMs: windowMs,
      planBudgetPerWindow: PLAN_BUDGET,
      steadyMinutes: STEADY_MINUTES,
      warmStart: WARM,
      sessionMinutes: 15,
      serverSize: 30,
      autoSaveSeconds: 60,
      changedKeysPerPlayerMinute: 8,
      shutdownDeadlineSeconds: 30,
      shutdownWhenWindowLeft: 0.4,
      precision: PRECISION,
      // session-close-now: the Luau layer as shipped (newSessionStore's defaults), with the changes asked.
      shippedLayer: { ...SHIPPED, ...SHIPPED_CHANGES },
    },
    searches,
    table: printed,
  };
  const outDir = join(ROOT, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, FIXED.length > 0 || env['BENCH_PLANS_PATTERNS'] || env['BENCH_PLANS_PLANS'] ? 'plans-partial.tmp.json' : 'plans.json');
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${file} in ${report.durationSeconds} s`);
}

/** Whole servers of 30 from 300 players up, tens from 100, ones below. */
function roundCount(n: number): number {
  const unit = n >= 300 ? 30 : n >= 100 ? 10 : 1;
  return Math.max(1, Math.round(n / unit) * unit);
}

function tableOf(searches: readonly Search[]): string {
  const header = ['pattern', 'plan', 'players (no 429, no loss)', 'first failing', 'req/player-min', 'peak in 10 s', 'shutdown req', 'runs'];
  const widths = [18, 5, 26, 14, 15, 13, 13, 5];
  const lines = [header.map((h, i) => (i < 2 ? h.padEnd(widths[i]!) : h.padStart(widths[i]!))).join(' ')];
  for (const s of searches) {
    const best = s.runs.find((r) => r.players === s.capacity);
    const cells = [
      s.pattern,
      s.plan,
      s.capacity === null ? 'none passed' : String(s.capacity),
      s.firstFailing === null ? '-' : String(s.firstFailing),
      best ? best.requestsPerPlayerMinute.toFixed(3) : '-',
      best ? `${best.peakWindowRequests}/${PLAN_BUDGET[s.plan]}` : '-',
      best ? String(best.shutdownRequests) : '-',
      String(s.runs.length),
    ];
    lines.push(cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' '));
  }
  return lines.join('\n');
}

runMain('bench:plans', main);
