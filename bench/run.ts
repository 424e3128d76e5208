// `npm run bench`: starts a private Redis (AOF everysec), the production build of the service
// as `npm start` runs it (one process, WORKERS=2, and one with auto-pipelining off) and the
// reference servers; seeds many workspaces; then runs every target in interleaved rounds with
// the same load settings and the same load generator (wrk in a process of its own when
// installed, lib/wrk.ts; the references read the same rotating players as the service,
// references/listen.ts) and reports medians, ratios to the references, Redis commands and
// CPU per request, and Redis memory per stored entry.
//
// Options (`npm run bench -- --help`; each also an environment variable, all optional): BENCH_ROUNDS (5), BENCH_DURATION seconds at
// BENCH_CONNECTIONS (2 s at 50), BENCH_LIGHT_DURATION at 4 connections (1 s), BENCH_WORKSPACES
// (2000), BENCH_MEMORY_PLAYERS (100000), BENCH_ONLY (comma-separated target labels or parts
// of them), BENCH_COMPARE (the path of another checkout, built: its service runs every
// scenario too, side by side, labelled "[compare]", on its own copy of the data in a second
// Redis so that the two builds do not share rate-limit windows), BENCH_COMPARE_FLAGS (node
// flags for the compare build only, to measure a flag), BENCH_COMPARE_ENV (settings for the
// compare build only, NAME=value space-separated, to measure a setting). Many short rounds rather than a few
// long ones: on a shared machine the median of many side-by-side samples is steadier than any
// single long run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../src/dev/local-redis.js';
import { defineScripts, preloadScripts } from '../src/store/redis/scripts.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { runLoad, useWrk, type LoadSettings, type RunResult } from './lib/load.js';
import { measureMemory, type MemoryResult } from './lib/memory.js';
import { spawnTarget, type Target } from './lib/processes.js';
import { compareEnv, compareFlags, startFlags } from './lib/start-command.js';
import { ceilingCommands, redisBenchmark, redisBenchmarkAvailable } from './lib/redis-bench.js';
import {
  median,
  medianOf,
  ratios,
  REFERENCES,
  round,
  rpsRange,
  savePlayerSummary,
  savePlayerText,
  table,
  targetResults,
  targetsText,
  type Row,
} from './lib/report.js';
import { REFERENCE_SCENARIO, SAVE_KEYS, SAVE_PLAYER, SCENARIOS, type Scenario } from './lib/scenarios.js';
import { seed } from './lib/seed.js';
import { BOARD_LABELS, BOARD_REFERENCES, boardScenarios, boardSummary, boardText, seedBoard, type BoardMemory } from './lib/boards.js';
import { benchOptions } from './lib/options.js';
import { onInterrupt } from './lib/processes.js';

benchOptions();

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const env = process.env;
const num = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);

const ROUNDS = num('BENCH_ROUNDS', 5);
const HEAVY: LoadSettings = { connections: num('BENCH_CONNECTIONS', 50), durationSeconds: num('BENCH_DURATION', 2) };
const LIGHT: LoadSettings = { connections: 4, durationSeconds: num('BENCH_LIGHT_DURATION', 1) };
const WORKSPACES = num('BENCH_WORKSPACES', 2000);
const MEMORY_PLAYERS = num('BENCH_MEMORY_PLAYERS', 100_000);
const ONLY = (env['BENCH_ONLY'] ?? '').split(',').filter(Boolean);
const BOARD_ENTRIES = num('BENCH_BOARD_ENTRIES', 1_000_000);
/** `=label` picks that label exactly; anything else, every label that contains it. */
const selected = (label: string) => ONLY.length === 0 || ONLY.some((o) => (o.startsWith('=') ? label === o.slice(1) : label.includes(o)));
const COMPARE = env['BENCH_COMPARE'];
/** Node flags for the compare build only (after NODE_FLAGS in bench:instructions). */
const COMPARE_FLAGS = compareFlags();
const COMPARE_ENV = compareEnv();

interface Job {
  readonly label: string;
  readonly target: Target;
  readonly scenario: Scenario;
  /** The Redis the target uses, for its command counts; the bench's own when unset. */
  readonly redis?: Redis;
}

/**
 * A second Redis holding a copy of the first one's data: it replicates it once, then stands
 * alone. The compare build runs on it, so it takes its rate-limit leases from windows of its
 * own; on a shared Redis the build that runs first in a round would find the other's windows
 * half spent and take more leases.
 */
async function copyOfRedis(source: LocalRedis, dataDir: string): Promise<{ server: LocalRedis; client: Redis }> {
  const server = await startLocalRedis({ dataDir, appendfsync: 'everysec' });
  const client = new Redis(server.url);
  defineScripts(client);
  await client.replicaof('127.0.0.1', String(source.port));
  for (;;) {
    const info = await client.info('replication');
    if (/master_link_status:up/.test(info) && /master_sync_in_progress:0/.test(info)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await client.replicaof('NO', 'ONE');
  await preloadScripts(client);
  return { server, client };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

const serviceEnv = (redisUrl: string, extra: Record<string, string> = {}) => ({
  REDIS_URL: redisUrl,
  HOST: '127.0.0.1',
  ADMIN_PORT: '0',
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  ...extra,
});

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  const bench = await startBenchRedis('bench', { appendfsync: 'everysec' });
  const { redis, server: redisServer, dataDir } = bench;
  const targets: Target[] = [];
  let compareRedis: { server: LocalRedis; client: Redis } | undefined;
  try {
    log(`redis ${redisServer.url} (AOF everysec); seeding ${WORKSPACES} workspaces`);
    const seeded = await seed(redis, WORKSPACES);
    const workspacesFile = join(dataDir, 'reference-workspaces.json');
    writeFileSync(workspacesFile, JSON.stringify(Object.fromEntries(seeded.apiKeys.map((k, i) => [k, seeded.workspaceIds[i]!]))));

    const spawnService = async (name: string, extra: Record<string, string> = {}) =>
      spawnTarget({
        name,
        args: [...startFlags(ROOT), join(ROOT, 'dist/main.js')],
        env: serviceEnv(redisServer.url, extra),
        readyPath: '/api/v1/ping',
      });
    const spawnReference = async (name: string, file: string) =>
      spawnTarget({
        name,
        args: ['--import', 'tsx', join(ROOT, 'bench/references', file)],
        env: { REDIS_URL: redisServer.url, REFERENCE_WORKSPACES_FILE: workspacesFile },
        readyPath: '/',
      });

    const service = await spawnService('service');
    const workers = await spawnService('service WORKERS=2', { WORKERS: '2' });
    const unpipelined = await spawnService('service REDIS_AUTO_PIPELINING=false', { REDIS_AUTO_PIPELINING: 'false' });
    const bare = await spawnReference(REFERENCES.bare, 'bare-http.ts');
    const httpHget = await spawnReference(REFERENCES.httpHget, 'http-hget.ts');
    const koaHget = await spawnReference(REFERENCES.koaHget, 'koa-hget.ts');
    const koaSet = await spawnReference(REFERENCES.koaSet, 'koa-set.ts');
    const koaIncrement = await spawnReference(REFERENCES.koaIncrement, 'koa-hincrby.ts');
    const koaBatch = await spawnReference(REFERENCES.koaBatch, 'koa-batch.ts');
    targets.push(service, workers, unpipelined, bare, httpHget, koaHget, koaSet, koaIncrement, koaBatch);
    // The leaderboard scenarios: their own board, a service whose one workspace has no plan
    // limit in reach, and the Koa references (lib/boards.ts). Seeded only when one is run, and
    // before the compare build's copy of the data is made, so that it has the board too.
    const boards = boardScenarios(BOARD_ENTRIES);
    const boardKeys = Object.keys(BOARD_LABELS) as Array<keyof typeof BOARD_LABELS>;
    const boardLabels = [
      ...Object.values(BOARD_LABELS),
      ...Object.values(BOARD_REFERENCES),
      ...(COMPARE ? Object.values(BOARD_LABELS).map((l) => `${l} [compare]`) : []),
    ];
    const boardsRun = BOARD_ENTRIES > 0 && boardLabels.some(selected);
    let boardJobs: Job[] = [];
    let boardMemory: BoardMemory | undefined;
    if (boardsRun) {
      log(`leaderboard: seeding a board of ${BOARD_ENTRIES} entries`);
      boardMemory = await seedBoard(redis, seeded.workspaceIds[0]!, BOARD_ENTRIES);
      const boardService = await spawnService('service (boards)', { RATE_LIMIT_PRO: '1000000000' });
      const koaBoard = await spawnReference('ref: Koa + board', 'koa-board.ts');
      targets.push(boardService, koaBoard);
      boardJobs = [
        ...boardKeys.map((k) => ({ label: BOARD_LABELS[k], target: boardService, scenario: boards[k] })),
        ...boardKeys.map((k) => ({ label: BOARD_REFERENCES[k], target: koaBoard, scenario: boards[k] })),
      ];
    }

    compareRedis = COMPARE ? await copyOfRedis(redisServer, join(dataDir, 'compare')) : undefined;
    if (compareRedis) {
      const { server, client } = compareRedis;
      onInterrupt(async () => {
        client.disconnect();
        await server.stop();
      });
    }
    const compare = compareRedis
      ? await spawnTarget({
          name: 'compare',
          args: [...startFlags(COMPARE!), ...COMPARE_FLAGS, join(COMPARE!, 'dist/main.js')],
          env: { ...serviceEnv(compareRedis.server.url), ...COMPARE_ENV },
          readyPath: '/api/v1/ping',
        })
      : undefined;
    if (compare) targets.push(compare);
    if (compareRedis && boardsRun) {
      const compareBoards = await spawnTarget({
        name: 'compare (boards)',
        args: [...startFlags(COMPARE!), ...COMPARE_FLAGS, join(COMPARE!, 'dist/main.js')],
        env: { ...serviceEnv(compareRedis.server.url, { RATE_LIMIT_PRO: '1000000000' }), ...COMPARE_ENV },
        readyPath: '/api/v1/ping',
      });
      targets.push(compareBoards);
      boardJobs.push(
        ...boardKeys.map((k) => ({ label: `${BOARD_LABELS[k]} [compare]`, target: compareBoards, scenario: boards[k], redis: compareRedis!.client })),
      );
    }

    let jobs: Job[] = [
      ...SCENARIOS.map((scenario) => ({ label: scenario.name, target: service, scenario })),
      ...['get', 'mix'].map((name) => ({
        label: `${name} (WORKERS=2)`,
        target: workers,
        scenario: SCENARIOS.find((s) => s.name === name)!,
      })),
      ...['get', 'mix'].map((name) => ({
        label: `${name} (auto-pipelining off)`,
        target: unpipelined,
        scenario: SCENARIOS.find((s) => s.name === name)!,
      })),
      ...(compare
        ? SCENARIOS.map((scenario) => ({ label: `${scenario.name} [compare]`, target: compare, scenario, redis: compareRedis!.client }))
        : []),
      { label: REFERENCES.bare, target: bare, scenario: REFERENCE_SCENARIO },
      { label: REFERENCES.httpHget, target: httpHget, scenario: REFERENCE_SCENARIO },
      { label: REFERENCES.koaHget, target: koaHget, scenario: REFERENCE_SCENARIO },
      { label: REFERENCES.koaSet, target: koaSet, scenario: SCENARIOS.find((s) => s.name === 'set')! },
      { label: REFERENCES.koaIncrement, target: koaIncrement, scenario: SCENARIOS.find((s) => s.name === 'increment')! },
      { label: REFERENCES.koaBatch, target: koaBatch, scenario: SCENARIOS.find((s) => s.name === SAVE_PLAYER.batch)! },
      ...boardJobs,
    ];
    jobs = jobs.filter((j) => selected(j.label));

    log(`warming up ${jobs.length} targets`);
    for (const job of jobs) await runLoad(job.target, job.scenario, seeded, { connections: HEAVY.connections, durationSeconds: 1 }, job.redis ?? redis);

    const heavy = new Map<string, RunResult[]>();
    const light = new Map<string, RunResult[]>();
    const ceilings = new Map<string, number[]>();
    const canRedisBenchmark = await redisBenchmarkAvailable();
    const loadPerRound: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      loadPerRound.push(round2(loadavg()[0]!));
      log(`round ${round}/${ROUNDS} (load average ${loadPerRound.at(-1)})`);
      for (const job of jobs) {
        const h = await runLoad(job.target, job.scenario, seeded, HEAVY, job.redis ?? redis);
        const l = await runLoad(job.target, job.scenario, seeded, LIGHT, job.redis ?? redis);
        (heavy.get(job.label) ?? heavy.set(job.label, []).get(job.label)!).push(h);
        (light.get(job.label) ?? light.set(job.label, []).get(job.label)!).push(l);
        const bad = Object.entries({ ...h.unexpectedByStatus }).map(([status, n]) => `${n}x ${status}`).join(', ');
        log(`  ${job.label}: ${Math.round(h.requestsPerSecond)} req/s, p50 ${h.p50} ms @${HEAVY.connections}; p50 ${l.p50} ms @4${bad ? `; unexpected: ${bad}` : ''}`);
      }
      if (canRedisBenchmark && ONLY.length === 0) {
        for (const [name, command] of Object.entries(ceilingCommands())) {
          const rps = await redisBenchmark(redisServer.port, command, {
            connections: HEAVY.connections,
            requests: 20_000,
            keyspace: WORKSPACES,
          });
          (ceilings.get(name) ?? ceilings.set(name, []).get(name)!).push(rps);
        }
      }
    }

    const rows: Row[] = jobs.map((job) => ({
      label: job.label,
      heavy: medianOf(heavy.get(job.label)!),
      light: medianOf(light.get(job.label)!),
      rpsRange: rpsRange(heavy.get(job.label)!),
    }));
    const redisCeilings = Object.fromEntries([...ceilings].map(([name, values]) => [name, Math.round(median(values))]));

    let memory: MemoryResult | undefined;
    if (ONLY.length === 0 && MEMORY_PLAYERS > 0) {
      log(`memory: ${MEMORY_PLAYERS} players`);
      memory = await measureMemory(redis, MEMORY_PLAYERS);
    }

    const printed = table(rows, HEAVY.connections, LIGHT.connections);
    if (loadAtStart > cpus().length * 0.5) {
      log(`the machine was busy (load average ${round(loadAtStart)} on ${cpus().length} cores at the start): figures are noisy`);
    }
    process.stdout.write(`\n${printed}\n`);
    const targetRows = targetResults(rows);
    if (targetRows.length > 0) {
      process.stdout.write(`\ntargets (issue 28): each against Koa taking the same request with one Redis command\n${targetsText(targetRows, HEAVY.connections)}\n`);
    }
    const savePlayer = savePlayerSummary(rows, SAVE_PLAYER, SAVE_KEYS);
    if (savePlayer) process.stdout.write(`\n${savePlayerText(savePlayer)}\n`);
    if (Object.keys(redisCeilings).length > 0) {
      process.stdout.write(`\nredis-benchmark (req/s, ${HEAVY.connections} connections): ${JSON.stringify(redisCeilings)}\n`);
    }
    // The A/B against the compare build (the last release, say): each scenario both ran, by medians.
    const against = COMPARE
      ? rows
          .filter((r) => rows.some((c) => c.label === `${r.label} [compare]`))
          .map((r) => {
            const c = rows.find((x) => x.label === `${r.label} [compare]`)!;
            return {
              scenario: r.label,
              requestsPerSecond: Math.round(r.heavy.requestsPerSecond),
              compareRequestsPerSecond: Math.round(c.heavy.requestsPerSecond),
              ratio: round(r.heavy.requestsPerSecond / c.heavy.requestsPerSecond),
              cpuRatio: round(c.heavy.cpuMicrosPerRequest / r.heavy.cpuMicrosPerRequest),
            };
          })
      : [];
    if (against.length > 0) {
      process.stdout.write(`\nagainst ${COMPARE} (x: ours over its req/s; cpu x: its CPU a request over ours)\n`);
      for (const a of against) {
        process.stdout.write(`${a.scenario.padEnd(28)} ${String(a.requestsPerSecond).padStart(8)} ${String(a.compareRequestsPerSecond).padStart(8)}  x ${a.ratio}  cpu x ${a.cpuRatio}\n`);
      }
    }
    const boardResults = boardSummary(rows);
    if (boardResults.length > 0 || boardMemory) process.stdout.write(`\n${boardText(boardResults, boardMemory)}\n`);
    if (memory) {
      process.stdout.write(
        `memory per small entry (${memory.players} players): service ${memory.serviceBytesPerEntry} B ` +
          `(history off: ${memory.serviceWithoutHistoryBytesPerEntry} B), bare HSET ${memory.bareHsetBytesPerEntry} B, ratio ${memory.ratio}\n`,
      );
    }

    const report = {
      date: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        memoryGb: round(totalmem() / 2 ** 30, 1),
        node: process.version,
        redis: (await redis.info('server')).match(/redis_version:(\S+)/)?.[1],
        loadAverageAtStart: round(loadAtStart),
        loadAverageAtEnd: loadavg().map((n) => round(n)),
        /** The 1-minute load average as each round started: the figures of a busy round are the noisy ones. */
        loadAverageByRound: loadPerRound,
        /** Other work was competing for the cores: figures are noisy, ratios less so. */
        busy: loadAtStart > cpus().length * 0.5,
      },
      settings: { rounds: ROUNDS, heavy: HEAVY, light: LIGHT, workspaces: WORKSPACES, only: ONLY, loadGenerator: (await useWrk()) ? 'wrk' : 'autocannon' },
      results: rows.map((row) => ({
        ...row,
        ratios: ratios(row, rows),
        ceiling: jobs.find((j) => j.label === row.label)?.scenario.redisCeiling,
      })),
      compare: COMPARE ? { build: COMPARE, results: against } : undefined,
      redisBenchmark: redisCeilings,
      targets: targetRows,
      savePlayer,
      memory,
      leaderboards: { entries: BOARD_ENTRIES, results: boardResults, memory: boardMemory },
      table: printed,
    };
    const outDir = join(ROOT, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    const file = join(outDir, ONLY.length > 0 ? 'partial.tmp.json' : 'latest.json');
    writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
    log(`wrote ${file} in ${report.durationSeconds} s`);
  } finally {
    await Promise.all(targets.map((t) => t.stop()));
    compareRedis?.client.disconnect();
    await compareRedis?.server.stop();
    await bench.close();
  }
}

runMain('bench', main);
