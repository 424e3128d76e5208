// What the history sweep costs Redis (docs/history.md, "When history leaves"): 2,000 players of
// 20 keys of 100 B, each written in 3 intervals (3 restore points), idle past their retention;
// then one sweep round of their workspace. Prints the Redis time of the per-player script
// (INFO commandstats, evalsha, reset before the round), the round's wall time, and used_memory
// before and after. On a private redis-server (list-compress-depth 1, as every Redis we start).
//   npx tsx bench/history-sweep.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { AdminOperations } from '../src/admin/operations.js';
import { loadConfig } from '../src/config.js';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { HistorySweep } from '../src/saves/history-sweep.js';
import { PlayerDataStore, playerLimitsOf } from '../src/store/players/player-data.js';
import { defineScripts } from '../src/store/redis/scripts.js';
import { recordPlayerWrites } from '../src/store/workspaces/player-index.js';
import { StorageUsage } from '../src/store/workspaces/storage-usage.js';

const PLAYERS = 2000;
const INTERVAL = 300_000;

const info = async (redis: Redis, section: string, field: RegExp) => (await redis.info(section)).match(field)?.[1];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'history-sweep-'));
  const server = await startLocalRedis({ dataDir: dir, appendonly: false });
  const redis = new Redis(server.url);
  defineScripts(redis);
  try {
    const config = loadConfig({ HISTORY_MAX_AGE_HOURS: '1' });
    const { workspaceId: ws } = await new AdminOperations(redis, { config }).createWorkspace({ name: 'bench', plan: 'pro' });
    const store = new PlayerDataStore(redis, playerLimitsOf(config));
    const start = Date.now() - 2 * 3_600_000;
    for (let p = 0; p < PLAYERS; p++) {
      for (let i = 0; i < 3; i++) {
        const ops = Array.from({ length: 20 }, (_, k) => ({ op: 'set' as const, key: `k${k}`, valueJson: JSON.stringify(`${i}:${k}`.padEnd(98, 'x')) }));
        await store.write(ws, `u${p}`, { ops }, { nowMs: start + i * INTERVAL, kind: 'batch', actor: 'key:bench' });
      }
      await recordPlayerWrites(redis, ws, [`u${p}`, String(start + 2 * INTERVAL)]);
    }
    const before = Number(await info(redis, 'memory', /used_memory:(\d+)/));
    await redis.config('RESETSTAT');
    const sweep = new HistorySweep(redis, new StorageUsage(redis, 1000), config);
    const t0 = performance.now();
    // 5,000 players at most a round: one round here.
    const round = await sweep.sweepWorkspace(ws, 'pro');
    const ms = performance.now() - t0;
    const evalsha = (await redis.info('commandstats')).match(/cmdstat_evalsha:calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/);
    const after = Number(await info(redis, 'memory', /used_memory:(\d+)/));
    console.log(`players swept: ${round.players}, history bytes dropped (\\0h): ${round.droppedBytes}`);
    console.log(`round: ${ms.toFixed(0)} ms wall; per-player script: ${evalsha?.[3]} µs of Redis time (${evalsha?.[1]} calls)`);
    console.log(`used_memory: ${before} B before, ${after} B after (${((before - after) / PLAYERS).toFixed(0)} B a player freed)`);
  } finally {
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
