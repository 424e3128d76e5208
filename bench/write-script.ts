// The write script alone: what one write costs Redis, measured steadily enough to tell two
// versions of lua/write-player.lua apart. The HTTP bench's requests/s move by 20% between runs
// of one build on this machine; the time Redis spends inside the script (INFO commandstats)
// moved by 3%.
//
// The EVALSHA the service sends for `npm run bench`'s increment and 1 KB set, to a private
// redis-server with AOF (everysec), as in production, over 2,000 players whose restore points
// were first filled (every player written at 60 earlier half-hour steps, so points are thinned
// and trimmed as in a long-running game). Three kinds of each write:
//   - history off (HISTORY_MAX_VERSIONS=0);
//   - history on, a write that repeats within its interval (redis-benchmark, 50 connections,
//     one clock reading: after the first, every write of a player is in the same interval);
//   - history on, the first write of an interval (sent from Node in pipelines, each write of a
//     player half an hour after its last: each opens a restore point, thins and trims).
// Per kind, the median over rounds of: calls/s, µs inside the script, Redis's CPU per call (its
// AOF rewrites' included) and the rewrites started. (calls/s of the last kind is Node's.)
//   npm run bench:script
//   BENCH_SCRIPT=/tmp/write-player.lua npm run bench:script   # also each kind with that file
// Options: BENCH_ROUNDS (3), BENCH_REQUESTS (100000 calls a round and kind), BENCH_SCRIPT (a
// version of lua/write-player.lua to compare with, its rows marked [BENCH_SCRIPT]), BENCH_ONLY
// (comma-separated parts of the rows' labels, e.g. `increment` or `history on`).
import { readFileSync } from 'node:fs';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import type { Redis } from 'ioredis';
import { BENCH_WRITES, redisBenchmark, redisBenchmarkAvailable, writeCommand, writeCommands } from './lib/redis-bench.js';
import { delta, persistenceIdle, snapshot } from './lib/redis-stats.js';
import { median } from './lib/report.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CALLS = Number(process.env['BENCH_REQUESTS'] ?? 100_000);
const PLAYERS = 2000;
const CONNECTIONS = 50;
/** Half-hour steps each player is written at before measuring: past HISTORY_FINE_HOURS, so points are thinned. */
const WARM_STEPS = 60;
const STEP_MS = 30 * 60_000;
const ONLY = process.env['BENCH_ONLY']?.split(',').map((part) => part.trim()).filter(Boolean);

interface Round {
  readonly callsPerSecond: number;
  readonly scriptMicros: number;
  readonly cpuMicros: number;
  readonly rewrites: number;
}

interface Kind {
  readonly label: string;
  /** A redis-benchmark command line (one clock reading for every call), or a function making each call's command. */
  readonly command: string[] | ((player: number, step: number) => string[]);
  readonly rounds: Round[];
}

const playerKey = (player: number, tag: string) => `pds:p:{bench-${String(player).padStart(12, '0')}:${tag}}`;

/** Sends `calls` commands from Node, a player at a time round-robin, each player's n-th at step `first + n`. */
async function sendStepped(redis: Redis, make: (player: number, step: number) => string[], calls: number, first: number): Promise<void> {
  for (let at = 0; at < calls; at += 1000) {
    const pipeline = redis.pipeline();
    for (let i = at; i < Math.min(calls, at + 1000); i++) {
      const [name, ...args] = make(i % PLAYERS, first + Math.floor(i / PLAYERS));
      pipeline.call(name!, ...args);
    }
    await pipeline.exec();
  }
}

async function main(): Promise<void> {
  if (!(await redisBenchmarkAvailable())) throw new Error('redis-benchmark is not on the PATH (Debian package redis-tools)');
  const bench = await startBenchRedis('write-script');
  const { redis, server } = bench;
  try {
    const scripts: { mark: string; sha?: string }[] = [{ mark: '' }];
    const other = process.env['BENCH_SCRIPT'];
    if (other) scripts.push({ mark: ' [BENCH_SCRIPT]', sha: (await redis.script('LOAD', readFileSync(other, 'utf8'))) as string });
    const kinds: Kind[] = [];
    // The clock of the repeated writes: past every warm-up step and every first-of-interval step.
    const base = Date.now() - 90 * 86_400_000;
    const repeatAt = Date.now();
    for (const [s, script] of scripts.entries()) {
      for (const op of ['increment', 'set'] as const) {
        const tag = (variant: string) => `w${s}${variant}${op}`;
        const variants: Array<[string, Kind['command']]> = [
          ['history off', writeCommands(tag('n'), { sha: script.sha, history: false, nowMs: repeatAt })[op]],
          ['history on, a repeat within its interval', writeCommands(tag('r'), { sha: script.sha, nowMs: repeatAt })[op]],
          [
            'history on, the first of its interval',
            (player, step) => writeCommand(playerKey(player, tag('f')), BENCH_WRITES[op], op, { sha: script.sha, nowMs: base + step * STEP_MS }),
          ],
        ];
        for (const [variant, command] of variants) {
          const label = `${op}, ${variant}${script.mark}`;
          if (ONLY && !ONLY.some((part) => label.includes(part))) continue;
          kinds.push({ label, command, rounds: [] });
        }
      }
    }
    // Each kind's players get their history first, at half-hour steps; then the repeated kinds
    // write once at their clock, which opens the interval every measured call repeats.
    const steps = new Map<Kind, number>();
    for (const kind of kinds) {
      process.stdout.write(`warming ${kind.label}\n`);
      const line = typeof kind.command === 'function' ? undefined : kind.command;
      const make = typeof kind.command === 'function' ? kind.command : (player: number, step: number) => withClock(line!, player, base + step * STEP_MS, repeatAt);
      await sendStepped(redis, make, PLAYERS * WARM_STEPS, 0);
      if (line) await sendStepped(redis, (player) => withClock(line, player, repeatAt, repeatAt), PLAYERS, 0);
      steps.set(kind, WARM_STEPS);
    }
    const run = async (kind: Kind, calls: number) => {
      if (typeof kind.command !== 'function') {
        return redisBenchmark(server.port, kind.command, { connections: CONNECTIONS, requests: calls, keyspace: PLAYERS });
      }
      const first = steps.get(kind)!;
      const started = performance.now();
      await sendStepped(redis, kind.command, calls, first);
      steps.set(kind, first + Math.ceil(calls / PLAYERS));
      return (calls / (performance.now() - started)) * 1000;
    };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of kinds) {
        await persistenceIdle(redis);
        const before = await snapshot(redis);
        const callsPerSecond = await run(kind, CALLS);
        await persistenceIdle(redis);
        const d = delta(before, await snapshot(redis));
        kind.rounds.push({
          callsPerSecond,
          scriptMicros: d.scriptMicros / d.scripts,
          cpuMicros: (d.cpuSeconds * 1e6) / d.scripts,
          rewrites: d.aofRewrites,
        });
        process.stdout.write(`round ${round} ${kind.label}: ${kind.rounds.at(-1)!.scriptMicros.toFixed(1)} µs in the script\n`);
      }
    }
    const width = Math.max(...kinds.map((k) => k.label.length));
    process.stdout.write(
      `\n${'write'.padEnd(width)}   calls/s   µs in script (min-max)   redis cpu µs/call   aof rw\n`,
    );
    for (const kind of kinds) {
      const micros = kind.rounds.map((r) => r.scriptMicros);
      process.stdout.write(
        `${kind.label.padEnd(width)}  ${median(kind.rounds.map((r) => r.callsPerSecond)).toFixed(0).padStart(8)}` +
          `   ${median(micros).toFixed(1).padStart(5)} (${Math.min(...micros).toFixed(1)}-${Math.max(...micros).toFixed(1)})`.padEnd(26) +
          `${median(kind.rounds.map((r) => r.cpuMicros)).toFixed(1).padStart(17)}` +
          `${kind.rounds.reduce((n, r) => n + r.rewrites, 0).toString().padStart(9)}\n`,
      );
    }
  } finally {
    await bench.close();
  }
}

/**
 * A redis-benchmark command line for one player (its __rand_int__ filled as redis-benchmark
 * does) at another clock: the line's own clock argument (ARGV[1], after the 6 keys) replaced.
 */
function withClock(line: readonly string[], player: number, nowMs: number, lineNowMs: number): string[] {
  return line.map((arg, i) => {
    if (i === 9 && arg === String(lineNowMs)) return String(nowMs);
    return arg.replace('__rand_int__', String(player).padStart(12, '0'));
  });
}

runMain('bench:script', main);
