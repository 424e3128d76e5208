// `npm run bench:players-list`: how long the console's players list takes on a workspace of
// BENCH_LIST_PLAYERS (200,000) players, against a private Redis and the real service: the first
// page, a page deep in the list (by its cursor), a prefix search and an exact search, each the
// median of BENCH_LIST_RUNS (15) calls of GET /admin/v1/workspaces/:id/players (25 rows). The
// players are written straight into Redis in the stored form (one key each, with the meta the
// service keeps) and listed as the write path lists them. Prints one JSON line.
import { performance } from 'node:perf_hooks';
import { AdminOperations } from '../src/admin/operations.js';
import { loadConfig } from '../src/config.js';
import { encodeEntry } from '../src/domain/entry.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../src/server.js';
import { keys } from '../src/store/keys.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';

const PLAYERS = Number(process.env['BENCH_LIST_PLAYERS'] ?? 200_000);
const RUNS = Number(process.env['BENCH_LIST_RUNS'] ?? 15);
const TOKEN = 'bench-admin-token-0123456789abcdef';
const BATCH = 5000;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100;
}

runMain('bench:players-list', async () => {
  const bench = await startBenchRedis('players-list');
  const config = loadConfig({ REDIS_URL: bench.server.url, PORT: '0', ADMIN_PORT: '0', ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' });
  const service = await startService(config, createLogger(config));
  try {
    const ops = new AdminOperations(bench.redis, { actor: 'bench' });
    const { workspaceId } = await ops.createWorkspace({ name: 'players list bench', plan: 'pro' });
    const start = Date.now() - PLAYERS * 1000;
    const filled = performance.now();
    for (let from = 0; from < PLAYERS; from += BATCH) {
      const pipe = bench.redis.pipeline();
      const index: Array<string | number> = [];
      for (let i = from; i < Math.min(PLAYERS, from + BATCH); i++) {
        const userId = String(1_000_000 + i);
        const entry = encodeEntry(`{"coins":${i},"level":${i % 90}}`, start + i * 1000);
        pipe.hset(keys.player(workspaceId, userId), 'progress', entry, '\0v', '3', '\0n', '1', '\0b', String(8 + entry.length));
        index.push(start + i * 1000, userId);
      }
      pipe.zadd(keys.workspacePlayers(workspaceId), ...index);
      await pipe.exec();
    }
    const fillSeconds = (performance.now() - filled) / 1000;
    const call = async (query: string) => {
      const t = performance.now();
      const res = await fetch(`${service.opsUrl}/admin/v1/workspaces/${workspaceId}/players?${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const body = (await res.json()) as { data: { players: unknown[]; next: string | null } };
      if (res.status !== 200) throw new Error(`${query}: ${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - t, rows: body.data.players.length };
    };
    const mid = PLAYERS / 2;
    const deepCursor = `${start + mid * 1000}:${1_000_000 + mid}`;
    const queries = {
      firstPage: 'limit=25',
      deepPage: `limit=25&cursor=${encodeURIComponent(deepCursor)}`,
      prefix: 'prefix=11234',
      exact: `userId=${1_000_000 + 4321}`,
    };
    const results: Record<string, { medianMs: number; maxMs: number; rows: number }> = {};
    for (const [name, query] of Object.entries(queries)) {
      await call(query); // warm
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < RUNS; i++) {
        const r = await call(query);
        times.push(r.ms);
        rows = r.rows;
      }
      results[name] = { medianMs: median(times), maxMs: Math.round(Math.max(...times) * 100) / 100, rows };
    }
    process.stdout.write(`${JSON.stringify({ players: await bench.redis.zcard(keys.workspacePlayers(workspaceId)), fillSeconds: Math.round(fillSeconds), runs: RUNS, results })}\n`);
  } finally {
    await service.close();
    await bench.close();
  }
});
