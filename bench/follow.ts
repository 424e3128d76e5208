// `npm run bench:follow`: what a board that follows a player key costs a write, and how soon the
// sweep mends a write whose instance died before its board (docs/leaderboards.md). Against a
// private Redis and the real service:
//   - POST /data/increment of a key no board follows, then of a key one board follows, each
//     BENCH_FOLLOW_SECONDS (8) at BENCH_FOLLOW_CONNECTIONS (20), over 1,000 players: req/s, p50, p99;
//   - BENCH_FOLLOW_CRASHES (40) writes left as a crashed instance leaves them (the intent and the
//     player's write, no board): the time until the service's sweep has the value on the board.
// Prints one JSON line.
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';
import { AdminOperations } from '../src/admin/operations.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { startService } from '../src/server.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';

const SECONDS = Number(process.env['BENCH_FOLLOW_SECONDS'] ?? 8);
const CONNECTIONS = Number(process.env['BENCH_FOLLOW_CONNECTIONS'] ?? 20);
const CRASHES = Number(process.env['BENCH_FOLLOW_CRASHES'] ?? 40);

function pass(url: string, apiKey: string, key: string): Promise<autocannon.Result> {
  let n = 0;
  return autocannon({
    url: `${url}/data/increment`,
    connections: CONNECTIONS,
    duration: SECONDS,
    requests: [
      {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ userId: n++ % 1000, key, amount: 1 }) }),
      },
    ],
  });
}

const summary = (r: autocannon.Result) => ({ rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors });

runMain('bench:follow', async () => {
  const bench = await startBenchRedis('follow');
  // A pro plan well above what one instance serves, so the plan never answers 429 here.
  const config = loadConfig({ REDIS_URL: bench.server.url, PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'silent', RATE_LIMIT_PRO: '10000000' });
  const service = await startService(config, createLogger(config));
  try {
    const ops = new AdminOperations(bench.redis, { actor: 'bench' });
    const { workspaceId, apiKey } = await ops.createWorkspace({ name: 'follow bench', plan: 'pro' });
    await ops.leaderboards.follow(workspaceId, 'gold', 'gold');
    const plain = summary(await pass(service.baseUrl, apiKey, 'coins'));
    const followed = summary(await pass(service.baseUrl, apiKey, 'gold'));

    const mended: number[] = [];
    for (let i = 0; i < CRASHES; i++) {
      const userId = `crash${i}`;
      const start = performance.now();
      await ops.follow.intent(workspaceId, userId, ['gold'], Date.now());
      await ops.players.write(workspaceId, userId, { ops: [{ op: 'set', key: 'gold', valueJson: String(i + 1) }] }, { nowMs: Date.now(), kind: 'set', actor: 'key:bench' });
      while ((await bench.redis.hget(`pds:lb:{${workspaceId}:gold}:f`, userId)) === null) await new Promise((r) => setTimeout(r, 5));
      mended.push(performance.now() - start);
    }
    mended.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        connections: CONNECTIONS,
        seconds: SECONDS,
        plainKey: plain,
        followedKey: followed,
        followedVsPlain: Math.round((followed.rps / plain.rps) * 100) / 100,
        crashedWritesMendedMs: { count: CRASHES, median: Math.round(mended[Math.floor(CRASHES / 2)]!), max: Math.round(mended[CRASHES - 1]!) },
      }),
    );
  } finally {
    await service.close();
    await bench.close();
  }
});
