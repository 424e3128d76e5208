// Runs one load pass (wrk, else autocannon) against one target and returns what the report needs: throughput,
// latency, status codes, and the CPU time that the target and Redis spent per request. A pass
// starts when Redis rewrites no AOF and ends when the rewrite it started (if any) has ended: the
// set scenario's writes start rewrites that would otherwise run through the next scenario's
// pass and be measured there; here they are charged to the pass that made them.
import autocannon from 'autocannon';
import type { Redis } from 'ioredis';
import type { Target } from './processes.js';
import { delta, persistenceIdle, snapshot } from './redis-stats.js';
import type { Scenario } from './scenarios.js';
import type { Seeded } from './seed.js';
import { runWrk, wrkAvailable } from './wrk.js';

export interface LoadSettings {
  readonly connections: number;
  readonly durationSeconds: number;
}

export interface RunResult {
  readonly requestsPerSecond: number;
  readonly requests: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Responses with another status than the scenario expects, plus socket errors and timeouts. */
  readonly unexpected: number;
  /** The statuses of the unexpected answers, and autocannon's errors (timeouts, resets), by count. */
  readonly unexpectedByStatus: Readonly<Record<string, number>>;
  /** Target CPU (user + system), microseconds per request. */
  readonly cpuMicrosPerRequest: number;
  /** The target's read and write system calls (sockets: HTTP and Redis) per request. */
  readonly syscallReadsPerRequest: number;
  readonly syscallWritesPerRequest: number;
  readonly redisCommandsPerRequest: number;
  readonly redisScriptsPerRequest: number;
  /** Redis CPU, its AOF rewrites' included, microseconds per request. */
  readonly redisMicrosPerRequest: number;
  /** AOF rewrites started during the pass. */
  readonly aofRewrites: number;
  readonly redisCommands: Readonly<Record<string, number>>;
}

export async function runLoad(
  target: Target,
  scenario: Scenario,
  seeded: Seeded,
  settings: LoadSettings,
  redis: Redis,
): Promise<RunResult> {
  await persistenceIdle(redis);
  const cpuBefore = target.cpuSeconds();
  const syscallsBefore = target.syscalls();
  const redisBefore = await snapshot(redis);
  if (await useWrk()) return wrkPass(target, scenario, seeded, settings, redis, cpuBefore, syscallsBefore, redisBefore);
  // autocannon's own histogram keeps whole milliseconds and only 2xx answers: record every
  // answer's latency here, to the microsecond, 429s included.
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: target.url,
        connections: settings.connections,
        duration: settings.durationSeconds,
        requests: scenario.requests(seeded),
        timeout: 10,
      },
      (err, done) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve(done)),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  const cpu = target.cpuSeconds() - cpuBefore;
  const syscallsAfter = target.syscalls();
  await persistenceIdle(redis);
  const redisAfter = await snapshot(redis);
  const requests = Math.max(1, result.requests.total);
  const byStatus: Record<string, { count?: number }> = result.statusCodeStats ?? {};
  const expected = byStatus[String(scenario.expectStatus)]?.count ?? 0;
  const d = delta(redisBefore, redisAfter);
  return {
    requestsPerSecond: result.requests.total / result.duration,
    requests: result.requests.total,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: percentile(latencies, 1),
    unexpected: result.requests.total - expected + result.errors,
    unexpectedByStatus: Object.fromEntries([
      ...Object.entries(byStatus)
        .filter(([status, stat]) => status !== String(scenario.expectStatus) && (stat.count ?? 0) > 0)
        .map(([status, stat]) => [status, stat.count ?? 0] as const),
      ...(result.errors > 0 ? [['errors', result.errors] as const] : []),
      ...(result.timeouts > 0 ? [['timeouts', result.timeouts] as const] : []),
    ]),
    cpuMicrosPerRequest: (cpu * 1e6) / requests,
    syscallReadsPerRequest: (syscallsAfter.reads - syscallsBefore.reads) / requests,
    syscallWritesPerRequest: (syscallsAfter.writes - syscallsBefore.writes) / requests,
    redisCommandsPerRequest: d.commands / requests,
    redisScriptsPerRequest: d.scripts / requests,
    redisMicrosPerRequest: (d.cpuSeconds * 1e6) / requests,
    aofRewrites: d.aofRewrites,
    redisCommands: Object.fromEntries(Object.entries(d.byCommand).map(([k, v]) => [k, round(v / requests, 3)])),
  };
}

/**
 * The load generator: wrk in a process of its own when installed (bench/lib/wrk.ts says why),
 * autocannon in this process otherwise or with BENCH_LOADGEN=autocannon.
 */
export async function useWrk(): Promise<boolean> {
  const chosen = process.env['BENCH_LOADGEN'];
  if (chosen === 'autocannon') return false;
  const has = await wrkAvailable();
  if (chosen === 'wrk' && !has) throw new Error('BENCH_LOADGEN=wrk but wrk is not installed (apt-get install wrk)');
  return has;
}

async function wrkPass(
  target: Target,
  scenario: Scenario,
  seeded: Seeded,
  settings: LoadSettings,
  redis: Redis,
  cpuBefore: number,
  syscallsBefore: { reads: number; writes: number },
  redisBefore: Awaited<ReturnType<typeof snapshot>>,
): Promise<RunResult> {
  const w = await runWrk(target.url, scenario.requests(seeded), settings.connections, settings.durationSeconds);
  const cpu = target.cpuSeconds() - cpuBefore;
  const syscallsAfter = target.syscalls();
  await persistenceIdle(redis);
  const redisAfter = await snapshot(redis);
  const requests = Math.max(1, w.requests);
  // wrk counts answers of 400 and more: the expected ones when the scenario expects a refusal.
  const wrongStatus = scenario.expectStatus >= 400 ? w.requests - w.non2xx : w.non2xx;
  const d = delta(redisBefore, redisAfter);
  return {
    requestsPerSecond: w.requests / w.durationSeconds,
    requests: w.requests,
    p50: w.p50,
    p99: w.p99,
    max: w.max,
    unexpected: wrongStatus + w.socketErrors + w.timeouts,
    unexpectedByStatus: Object.fromEntries(
      [
        [scenario.expectStatus >= 400 ? 'below 400' : '400 or more', wrongStatus] as const,
        ['errors', w.socketErrors] as const,
        ['timeouts', w.timeouts] as const,
      ].filter(([, n]) => n > 0),
    ),
    cpuMicrosPerRequest: (cpu * 1e6) / requests,
    syscallReadsPerRequest: (syscallsAfter.reads - syscallsBefore.reads) / requests,
    syscallWritesPerRequest: (syscallsAfter.writes - syscallsBefore.writes) / requests,
    redisCommandsPerRequest: d.commands / requests,
    redisScriptsPerRequest: d.scripts / requests,
    redisMicrosPerRequest: (d.cpuSeconds * 1e6) / requests,
    aofRewrites: d.aofRewrites,
    redisCommands: Object.fromEntries(Object.entries(d.byCommand).map(([k, v]) => [k, round(v / requests, 3)])),
  };
}

/** Nearest-rank percentile, in milliseconds rounded to the microsecond. */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  values.sort((a, b) => a - b);
  return round(values[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]!, 3);
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
