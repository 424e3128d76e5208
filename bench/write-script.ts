// The write script alone: what one write costs Redis, measured steadily enough to tell two
// versions of lua/write-player.lua apart. The HTTP bench's requests/s move by 20% between runs
// of one build on this machine; the time Redis spends inside the script (INFO commandstats)
// moved by 3%.
//
// redis-benchmark (50 connections, 2,000 players) sends the EVALSHA the service sends for
// `npm run bench`'s increment and 1 KB set, with history kept (the default) and with none
// (HISTORY_MAX_VERSIONS=0), to a private redis-server with AOF (everysec), as in production.
// Each kind first writes every player 55 times, so that history lists are full (a write then
// pushes one entry and drops one, as in a long-running game). Per kind, the median over rounds
// of: calls/s, µs inside the script, Redis's CPU per call (its AOF rewrites' included) and the
// rewrites started.
//   npm run bench:script
//   BENCH_SCRIPT=/tmp/write-player.lua npm run bench:script   # also each kind with that file
// Options: BENCH_ROUNDS (3), BENCH_REQUESTS (100000 calls a round and kind), BENCH_SCRIPT (a
// version of lua/write-player.lua to compare with, its rows marked [BENCH_SCRIPT]), BENCH_ONLY
// (comma-separated parts of the rows' labels, e.g. `increment` or `history on`).
import { readFileSync } from 'node:fs';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { redisBenchmark, redisBenchmarkAvailable, writeCommands } from './lib/redis-bench.js';
import { delta, persistenceIdle, snapshot } from './lib/redis-stats.js';
import { median } from './lib/report.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CALLS = Number(process.env['BENCH_REQUESTS'] ?? 100_000);
const PLAYERS = 2000;
const CONNECTIONS = 50;
/** Writes a player gets before measuring: more than the 50 versions kept by default. */
const WARM_WRITES_PER_PLAYER = 55;
const ONLY = process.env['BENCH_ONLY']?.split(',').map((part) => part.trim()).filter(Boolean);

interface Round {
  readonly callsPerSecond: number;
  readonly scriptMicros: number;
  readonly cpuMicros: number;
  readonly rewrites: number;
}

interface Kind {
  readonly label: string;
  readonly command: string[];
  readonly rounds: Round[];
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
    for (const [s, script] of scripts.entries()) {
      for (const history of [true, false]) {
        const commands = writeCommands(`w${s}${history ? 'h' : 'n'}`, { sha: script.sha, history });
        for (const op of ['increment', 'set'] as const) {
          const label = `${op}, history ${history ? 'on' : 'off'}${script.mark}`;
          if (ONLY && !ONLY.some((part) => label.includes(part))) continue;
          kinds.push({ label, command: commands[op], rounds: [] });
        }
      }
    }
    const run = (kind: Kind, calls: number) =>
      redisBenchmark(server.port, kind.command, { connections: CONNECTIONS, requests: calls, keyspace: PLAYERS });
    for (const kind of kinds) {
      process.stdout.write(`warming ${kind.label}\n`);
      await run(kind, PLAYERS * WARM_WRITES_PER_PLAYER);
    }
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

runMain('bench:script', main);
