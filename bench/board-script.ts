// The leaderboard scripts alone: what a rank lookup and an increment cost Redis, against the
// commands the Koa reference sends for the same request (ZREVRANK + ZSCORE, ZINCRBY), measured
// steadily enough to tell two versions of a script apart. The HTTP bench's requests/s move by
// 20% between runs on this machine; the time Redis spends inside a call (INFO commandstats)
// moves by a few percent.
//
// A private redis-server with AOF (everysec), as in production; one board of BENCH_BOARD_ENTRIES
// (1,000,000) players with random scores, written as the service writes it
// (store/boards/board-transfer.ts), and a bare sorted set of the same entries (member = user id).
// redis-benchmark sends each row's command at 50 connections, a random player each call. Per
// row, the median over rounds of: calls/s, µs inside the command (`usec_per_call`), and Redis's
// CPU per call (its process, AOF rewrites included: the syscalls of reading and answering
// each call, which commandstats does not time).
//   npm run bench:board-script
//   BENCH_BOARD_WRITE=/tmp/board-write.lua BENCH_BOARD_RANK=/tmp/board-rank.lua npm run bench:board-script
// Options: BENCH_ROUNDS (3), BENCH_REQUESTS (100000 calls a round and row), BENCH_BOARD_ENTRIES
// (1000000), BENCH_BOARD_WRITE / BENCH_BOARD_RANK (other versions of lua/board-write.lua or
// lua/board-rank.lua, comma-separated files, run on the same board with the same arguments, their
// rows marked [other]; each must read the board as the service writes it), BENCH_ONLY
// (comma-separated parts of the rows' labels), BENCH_CALLGRIND (1: redis-server runs under
// valgrind's callgrind, and each row also gives the instructions Redis ran a call, user space
// only, the same from run to run whatever else the machine runs; about 50 times slower, so use
// fewer entries and calls, e.g. BENCH_BOARD_ENTRIES=200000 BENCH_REQUESTS=20000 BENCH_ROUNDS=1),
// BENCH_CALLGRIND_DIR (a folder that keeps callgrind's dumps, one a row and round, in the rows'
// order, for callgrind_annotate).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { periodAt } from '../src/domain/periods.js';
import { writeBoardEntries } from '../src/store/boards/board-transfer.js';
import { BoardRegistry } from '../src/store/boards/board-registry.js';
import { LeaderboardStore } from '../src/store/boards/leaderboard-store.js';
import { keys } from '../src/store/keys.js';
import { SCRIPTS } from '../src/store/redis/scripts.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { control, dumpTotal, valgrindAvailable } from './lib/callgrind.js';
import { redisBenchmark, redisBenchmarkAvailable } from './lib/redis-bench.js';
import { delta, persistenceIdle, snapshot } from './lib/redis-stats.js';
import { median } from './lib/report.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const CALLS = Number(process.env['BENCH_REQUESTS'] ?? 100_000);
const ENTRIES = Number(process.env['BENCH_BOARD_ENTRIES'] ?? 1_000_000);
const ONLY = process.env['BENCH_ONLY']?.split(',').map((part) => part.trim()).filter(Boolean);
const CONNECTIONS = 50;
/** Redis under callgrind: instructions a call, which no other work on the machine moves. */
const CALLGRIND = process.env['BENCH_CALLGRIND'] === '1';
const CHUNK = 1000;
const WORKSPACE = 'bench-board';
const BOARD = 'bench';
const BARE = 'bench-ref:board';

/** Players as redis-benchmark's __rand_int__ names them (12 digits), so a row's calls reach them. */
const userOf = (i: number) => `p${String(i).padStart(12, '0')}`;
const RANDOM_USER = 'p__rand_int__';

/** The same scrambler as the HTTP bench: scores look random and repeat run to run. */
function scramble(i: number): number {
  let h = Math.imul(i ^ (i >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

interface Row {
  readonly label: string;
  readonly command: string[];
  readonly rounds: Array<{ callsPerSecond: number; micros: number; cpuMicros: number; instructions: number }>;
}

const shaOf = (name: string) => SCRIPTS.find((s) => s.name === name)!.sha1;

async function main(): Promise<void> {
  if (!(await redisBenchmarkAvailable())) throw new Error('redis-benchmark is not on the PATH (Debian package redis-tools)');
  const keepDumps = process.env['BENCH_CALLGRIND_DIR'];
  const cgDir = keepDumps ?? mkdtempSync(join(tmpdir(), 'pds-board-callgrind-'));
  mkdirSync(cgDir, { recursive: true });
  if (CALLGRIND && !valgrindAvailable()) throw new Error('valgrind is not on the PATH (Debian: apt-get install valgrind)');
  const bench = await startBenchRedis('board-script', {
    appendfsync: 'everysec',
    ...(CALLGRIND
      ? { runUnder: ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(cgDir, 'cg.%p')}`], readyTimeoutMs: 120_000 }
      : {}),
  });
  const { redis, server } = bench;
  const pid = server.process.pid!;
  try {
    process.stdout.write(`seeding a board of ${ENTRIES} entries and a bare sorted set of the same\n`);
    const store = new LeaderboardStore(redis, new BoardRegistry(redis, 1000), { maxEntries: 10_000_000, idempotencyTtlSeconds: 86_400 });
    await store.registry.register(WORKSPACE, BOARD, Date.now());
    await store.syncMeta(WORKSPACE, BOARD, ['all'], true);
    const window = periodAt('all', 0);
    for (let start = 0; start < ENTRIES; start += CHUNK) {
      const chunk: Array<readonly [string, string]> = [];
      const bare: Array<string | number> = [];
      for (let i = start; i < Math.min(ENTRIES, start + CHUNK); i++) {
        const score = scramble(i) % 1_000_000;
        chunk.push([userOf(i), String(score)]);
        bare.push(score, userOf(i));
      }
      await writeBoardEntries(redis, WORKSPACE, BOARD, window, chunk, 10_000_000, Date.now());
      await redis.zadd(BARE, ...bare);
    }

    const meta = keys.boardMeta(WORKSPACE, BOARD);
    const scores = keys.boardScores(WORKSPACE, BOARD, 'all');
    const members = keys.boardMembers(WORKSPACE, BOARD, 'all');
    // As LeaderboardStore.rank and .write send them (no idempotency key, a board kept for all-time).
    const rankCall = (sha: string) => ['EVALSHA', sha, '3', meta, scores, members, 'all', 'd', RANDOM_USER, '0'];
    const incrementCall = (sha: string) => [
      'EVALSHA', sha, '5', meta, keys.boardIdempotency(WORKSPACE, BOARD, '-'), keys.boardFollowed(WORKSPACE, BOARD), scores, members,
      'i', RANDOM_USER, '1', 'all', '0', '10000000 86400', '', '',
    ];
    const rows: Row[] = [
      { label: 'rank: board-rank.lua', command: rankCall(shaOf('boardRank')), rounds: [] },
      { label: 'rank ref: ZREVRANK', command: ['ZREVRANK', BARE, RANDOM_USER], rounds: [] },
      { label: 'rank ref: ZSCORE', command: ['ZSCORE', BARE, RANDOM_USER], rounds: [] },
      { label: 'increment: board-write.lua', command: incrementCall(shaOf('boardWrite')), rounds: [] },
      { label: 'increment ref: ZINCRBY', command: ['ZINCRBY', BARE, '1', RANDOM_USER], rounds: [] },
    ];
    for (const [env, label, make] of [
      ['BENCH_BOARD_RANK', 'rank:', rankCall],
      ['BENCH_BOARD_WRITE', 'increment:', incrementCall],
    ] as const) {
      for (const file of (process.env[env] ?? '').split(',').filter(Boolean)) {
        rows.push({ label: `${label} [other] ${file}`, command: make((await redis.script('LOAD', readFileSync(file, 'utf8'))) as string), rounds: [] });
      }
    }
    const picked = rows.filter((row) => !ONLY || ONLY.some((part) => row.label.includes(part)));

    for (let round = 1; round <= ROUNDS; round++) {
      for (const row of picked) {
        await persistenceIdle(redis);
        const before = await snapshot(redis);
        if (CALLGRIND) {
          control(pid, {}, '-z');
          control(pid, {}, '-i', 'on');
        }
        const callsPerSecond = await redisBenchmark(server.port, row.command, { connections: CONNECTIONS, requests: CALLS, keyspace: ENTRIES });
        if (CALLGRIND) control(pid, {}, '-i', 'off');
        const instructions = CALLGRIND ? await dumpTotal(cgDir, pid, {}) : 0;
        await persistenceIdle(redis);
        const after = await snapshot(redis);
        const d = delta(before, after);
        const name = row.command[0]!.toLowerCase();
        const calls = d.byCommand[name] ?? 0;
        const usec = d.microsByCommand[name] ?? 0;
        row.rounds.push({ callsPerSecond, micros: usec / calls, cpuMicros: (d.cpuSeconds * 1e6) / calls, instructions: instructions / calls });
        process.stdout.write(
          `round ${round} ${row.label}: ${(usec / calls).toFixed(2)} µs inside, ${((d.cpuSeconds * 1e6) / calls).toFixed(1)} µs of CPU a call` +
            (CALLGRIND ? `, ${Math.round(instructions / calls)} instructions a call` : '') +
            '\n',
        );
      }
    }

    const width = Math.max(...picked.map((r) => r.label.length));
    process.stdout.write(`\n${'command'.padEnd(width)}   calls/s   µs inside (min-max)   redis cpu µs/call${CALLGRIND ? '   instructions/call' : ''}\n`);
    for (const row of picked) {
      const micros = row.rounds.map((r) => r.micros);
      process.stdout.write(
        `${row.label.padEnd(width)}  ${median(row.rounds.map((r) => r.callsPerSecond)).toFixed(0).padStart(8)}` +
          `   ${`${median(micros).toFixed(2)} (${Math.min(...micros).toFixed(2)}-${Math.max(...micros).toFixed(2)})`.padEnd(22)}` +
          `${median(row.rounds.map((r) => r.cpuMicros)).toFixed(1).padStart(14)}` +
          (CALLGRIND ? `${Math.round(median(row.rounds.map((r) => r.instructions))).toString().padStart(20)}` : '') +
          '\n',
      );
    }
  } finally {
    await bench.close();
    if (!keepDumps) rmSync(cgDir, { recursive: true, force: true });
  }
}

runMain('bench:board-script', main);
