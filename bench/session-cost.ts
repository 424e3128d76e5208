// `npm run bench:session`: what each operation of a game server's session workload costs, the
// figures docs/capacity.md and `npm run capacity` build the fleet from. The production build on
// a private Redis (AOF everysec), one workspace, SERVERS simulated servers of 30 players, every
// request with an Idempotency-Key as both clients send, in phases of one operation each:
//   join       POST /sessions/acquire {userId, owner, load: true}, one player
//   autosave   POST /data/batch of the server's 30 players with their sessions (a profile of
//              about 1 KB, coins, level), the session layer's autosave
//   message    POST /messages to one player
//   leaderboard POST /leaderboards/<board>/increment, one player
//   leave      POST /sessions/release, one player
// For each phase: the service's CPU (user + system, /proc) and Redis's (its process, INFO cpu,
// and the time inside commands, INFO commandstats usec) per operation, both less what they spend
// idle over the same time; Redis commands per operation. Then memory: a player's data hash
// (MEMORY USAGE), what the kept answers of Idempotency-Keys cost per request (MEMORY USAGE of
// every claim and kept answer over the requests made), and a player's restore points after 30
// days of play (bench/history-memory.ts's heaviest game). Writes bench/results/session-cost.json.
//   Options (environment): BENCH_SESSION_SERVERS (20), BENCH_SESSION_AUTOSAVES (10 per server).
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../src/admin/operations.js';
import { keys } from '../src/store/keys.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';
import { spawnTarget, type Target } from './lib/processes.js';
import { snapshot, type RedisSnapshot } from './lib/redis-stats.js';
import { startFlags } from './lib/start-command.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SERVERS = Number(process.env['BENCH_SESSION_SERVERS'] ?? 20);
const AUTOSAVES = Number(process.env['BENCH_SESSION_AUTOSAVES'] ?? 10);
const PLAYERS_PER_SERVER = 30;
const IN_FLIGHT = 8;
const BOARD = 'coins';

export type Operation = 'join' | 'autosave' | 'leave' | 'message' | 'leaderboard';

export interface OperationCost {
  readonly count: number;
  /** Players one operation covers (30 for an autosave). */
  readonly players: number;
  readonly serviceCpuMicros: number;
  /** Redis's process CPU per operation (INFO cpu: the event loop, networking and AOF included). */
  readonly redisCpuMicros: number;
  /** Time inside commands per operation (INFO commandstats usec), a part of redisCpuMicros. */
  readonly redisCommandMicros: number;
  readonly redisCommands: number;
}

const log = (message: string) => process.stderr.write(`[session-cost] ${message}\n`);
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Runs `work` on each item, IN_FLIGHT at a time. */
async function pool<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

async function memoryOf(redis: Redis, pattern: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let count = 0;
  let bytes = 0;
  do {
    const [after, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = after;
    for (const key of found) {
      count++;
      bytes += Number(await redis.memory('USAGE', key, 'SAMPLES', 0)) || 0;
    }
  } while (cursor !== '0');
  return { keys: count, bytes };
}

/** The heaviest game's restore points after 30 days of play, MEMORY USAGE of both lists (bench/history-memory.ts). */
async function historyBytesPerPlayer(): Promise<{ bytes: number; game: string }> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/history-memory.ts')], {
    cwd: ROOT,
    maxBuffer: 1 << 20,
  });
  let best = { bytes: 0, game: '' };
  for (const line of stdout.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const bytes = Number((cells[6] ?? '').replace(/[^\d]/g, ''));
    if (cells.length >= 7 && bytes > best.bytes) best = { bytes, game: cells[1]! };
  }
  if (best.bytes === 0) throw new Error(`bench/history-memory.ts printed no table:\n${stdout}`);
  return best;
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  const bench = await startBenchRedis('session', { appendfsync: 'everysec' });
  const { redis, server } = bench;
  let service: Target | undefined;
  try {
    const ws = await new AdminOperations(redis).createWorkspace({ name: 'session cost', plan: 'pro', id: 'bench-session' });
    service = await spawnTarget({
      name: 'service',
      args: [...startFlags(ROOT), join(ROOT, 'dist/main.js')],
      env: { REDIS_URL: server.url, HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production', RATE_LIMIT_PRO: '1000000000' },
      readyPath: '/api/v1/ping',
    });
    const target = service;
    let sequence = 0;
    const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${target.url}/api/v1${path}`, {
        method: 'POST',
        headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json', 'idempotency-key': `op-${sequence++}` },
        body: JSON.stringify(body),
      });
      const answer = (await res.json()) as Record<string, unknown>;
      if (res.status !== 200 && res.status !== 201) throw new Error(`${path}: ${res.status} ${JSON.stringify(answer)}`);
      return answer;
    };

    const sessions = new Map<string, string>();
    const profile = (userId: string, n: number) => ({
      name: userId,
      level: n,
      inventory: Array.from({ length: 20 }, (_, i) => ({ id: 1000 + i, qty: (n + i) % 50 })),
      settings: { music: n % 2 === 0, sensitivity: 0.5 },
      quests: Array.from({ length: 8 }, (_, i) => ({ id: `q${i}`, step: (n + i) % 7 })),
    });

    // Idle baseline: what the service and Redis spend with no requests (timers, flushes).
    const idleSeconds = 2;
    const idleBefore = { service: target.cpuSeconds(), redis: await snapshot(redis) };
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idleAfter = { service: target.cpuSeconds(), redis: await snapshot(redis) };
    const idle = {
      service: (idleAfter.service - idleBefore.service) / idleSeconds,
      redis: (idleAfter.redis.cpuSeconds - idleBefore.redis.cpuSeconds) / idleSeconds,
    };

    const costs: Partial<Record<Operation, OperationCost>> = {};
    let measuring = false;
    const phase = async (name: Operation, count: number, perOp: number, run: () => Promise<void>) => {
      if (!measuring) return run();
      const t0 = Date.now();
      const s0 = target.cpuSeconds();
      const r0: RedisSnapshot = await snapshot(redis);
      await run();
      const seconds = (Date.now() - t0) / 1000;
      const r1 = await snapshot(redis);
      const s1 = target.cpuSeconds();
      const sum = (m: Readonly<Record<string, number>>) => Object.values(m).reduce((a, b) => a + b, 0);
      costs[name] = {
        count,
        players: perOp,
        serviceCpuMicros: round((Math.max(0, s1 - s0 - idle.service * seconds) * 1e6) / count),
        redisCpuMicros: round((Math.max(0, r1.cpuSeconds - r0.cpuSeconds - idle.redis * seconds) * 1e6) / count),
        redisCommandMicros: round((sum(r1.micros) - sum(r0.micros)) / count),
        redisCommands: round((sum(r1.calls) - sum(r0.calls)) / count, 2),
      };
      log(`${name}: ${count} in ${seconds.toFixed(1)} s, ${JSON.stringify(costs[name])}`);
    };

    /** The whole session of `count` servers' players, phase by phase; `prefix` names its players. */
    const workload = async (prefix: string, count: number) => {
    const servers = Array.from({ length: count }, (_, s) => Array.from({ length: PLAYERS_PER_SERVER }, (_, i) => `${prefix}s${s}p${i}`));
    const players = servers.flat();
    await phase('join', players.length, 1, () =>
      pool(players, async (userId) => {
        const s = userId.slice(0, userId.lastIndexOf('p'));
        const answer = await post('/sessions/acquire', { userId, owner: `server-${s}`, load: true });
        sessions.set(userId, (answer['data'] as { sessionId: string }).sessionId);
      }),
    );
    const saves = servers.flatMap((list) => Array.from({ length: AUTOSAVES }, (_, n) => ({ list, n })));
    await phase('autosave', saves.length, PLAYERS_PER_SERVER, () =>
      pool(saves, async ({ list, n }) => {
        await post('/data/batch', {
          players: list.map((userId) => ({
            userId,
            sessionId: sessions.get(userId),
            ops: [
              { op: 'set', key: 'profile', value: profile(userId, n) },
              { op: 'increment', key: 'coins', amount: 5 },
              { op: 'set', key: 'level', value: n },
            ],
          })),
        });
      }),
    );
    await phase('message', players.length, 1, () =>
      pool(players, async (userId) => void (await post('/messages', { userId, message: { type: 'gift', from: 'friend', item: 1001 } }))),
    );
    await phase('leaderboard', players.length, 1, () =>
      pool(players, async (userId) => void (await post(`/leaderboards/${BOARD}/increment`, { userId, amount: 10 }))),
    );
    await phase('leave', players.length, 1, () =>
      pool(players, async (userId) => void (await post('/sessions/release', { userId, sessionId: sessions.get(userId) }))),
    );
    };
    // A first, unmeasured pass: the service's code compiled by the JIT and its caches filled, as
    // in a service that has been running.
    log('warming up');
    await workload('w', Math.max(2, Math.ceil(SERVERS / 4)));
    const warmRequests = sequence;
    measuring = true;
    await workload('', SERVERS);

    log('memory');
    const rss = Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${target.process.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    const data = await memoryOf(redis, keys.playerHashPattern(ws.workspaceId));
    const inbox = await memoryOf(redis, `${keys.playerPattern(ws.workspaceId)}:m`);
    const kept = [
      await memoryOf(redis, keys.idempotencyClaimPattern(ws.workspaceId)),
      await memoryOf(redis, `${keys.playerPattern(ws.workspaceId)}:i:*`),
      await memoryOf(redis, `${keys.boardPattern(ws.workspaceId)}:i:*`),
    ];
    const keptBytes = kept.reduce((a, k) => a + k.bytes, 0);
    const history = await historyBytesPerPlayer();
    const report = {
      date: new Date(started).toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        node: process.version,
        redis: (await redis.info('server')).match(/redis_version:(\S+)/)?.[1],
        loadAverageAtStart: round(loadAtStart, 2),
        loadAverageAtEnd: round(loadavg()[0]!, 2),
      },
      settings: { servers: SERVERS, playersPerServer: PLAYERS_PER_SERVER, autosavesPerServer: AUTOSAVES, inFlight: IN_FLIGHT },
      idle: { serviceCpuPercent: round(idle.service * 100, 2), redisCpuPercent: round(idle.redis * 100, 2) },
      operations: costs as Record<Operation, OperationCost>,
      memory: {
        /** MEMORY USAGE of a player's data hash after the workload (a 1 KB profile, coins, level, the session). */
        dataBytesPerPlayer: Math.round(data.bytes / Math.max(1, data.keys)),
        /** A player's waiting messages (one), when it has any. */
        inboxBytesPerPlayer: Math.round(inbox.bytes / Math.max(1, inbox.keys)),
        /** Restore points of a player after 30 days of play, the heaviest game of bench/history-memory.ts. */
        historyBytesPerPlayer: history.bytes,
        historyGame: history.game,
        /** Kept answers (claims, players' and boards' records) per request made, for IDEMPOTENCY_TTL_SECONDS. */
        keptBytesPerRequest: Math.round(keptBytes / Math.max(1, sequence)),
        /** The service process's peak resident memory over the run (VmHWM). */
        servicePeakRssBytes: rss,
        requests: sequence,
        warmUpRequests: warmRequests,
      },
    };
    const out = join(ROOT, 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'session-cost.json'), JSON.stringify(report, null, 2) + '\n');
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    log(`wrote bench/results/session-cost.json in ${report.durationSeconds} s`);
  } finally {
    await service?.stop();
    await bench.close();
  }
}

runMain('session-cost', main);
