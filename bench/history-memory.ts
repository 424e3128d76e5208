// What a player's restore points cost in Redis memory (docs/history.md), with the service's own
// write script and default settings (HISTORY_INTERVAL_SECONDS 300, every point for 24 h, then
// one an hour for a week, then one a day, 30 days, HISTORY_MAX_BYTES 256 KiB), on simulated time: 30 days of play, a
// session of two hours a day, one save a minute. Games:
//   - 20 keys of 100 bytes, all saved each minute (the example);
//   - 10 small keys, one key saved per write, every minute;
//   - a 1 KB inventory rewritten each minute.
// Prints the restore points kept, their bytes as counted (\0h, what the quota counts) and
// `MEMORY USAGE` of both lists (list-compress-depth 1, as every Redis we start or ship runs),
// and how far back the oldest point reaches.
//   npx tsx bench/history-memory.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config.js';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { keys } from '../src/store/keys.js';
import { PlayerDataStore, playerLimitsOf } from '../src/store/players/player-data.js';
import { parseHistoryElement, restorePoints } from '../src/store/players/player-history.js';
import type { Op } from '../src/store/players/script-protocol.js';
import { defineScripts } from '../src/store/redis/scripts.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const hundredBytes = (key: string, n: number) => JSON.stringify(`${key}:${n}:`.padEnd(98, 'x'));
const SMALL = ['coins', 'gems', 'level', 'xp', 'name', 'class', 'hp', 'mana', 'lastLogin', 'settings'];
const inventory = (n: number) =>
  JSON.stringify({ items: Array.from({ length: 30 }, (_, i) => ({ id: 1000 + i, qty: (n * 7 + i) % 50, name: `item${i}` })) });

const GAMES: ReadonlyArray<readonly [string, (n: number) => Op[]]> = [
  ['20 keys of 100 B, all saved each minute', (n) => Array.from({ length: 20 }, (_, k) => ({ op: 'set', key: `k${k}`, valueJson: hundredBytes(`k${k}`, n) }))],
  ['10 small keys, one saved each minute', (n) => [{ op: 'set', key: SMALL[n % SMALL.length]!, valueJson: String(100 + n) }]],
  ['a 1 KB inventory saved each minute', (n) => [{ op: 'set', key: 'inventory', valueJson: inventory(n) }]],
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'history-memory-'));
  const redisServer = await startLocalRedis({ dataDir: dir, appendonly: false });
  const redis = new Redis(redisServer.url);
  defineScripts(redis);
  const store = new PlayerDataStore(redis, playerLimitsOf(loadConfig({})));
  const start = Math.floor(Date.now() / DAY) * DAY - 30 * DAY + 18 * 60 * MINUTE; // 18:00 UTC, 30 days ago
  try {
    console.log('| game | writes | restore points kept | oldest point | bytes counted (\\0h) | MEMORY USAGE of the lists |');
    console.log('|---|---|---|---|---|---|');
    for (const [name, ops] of GAMES) {
      const user = name.replace(/\W+/g, '-');
      let n = 0;
      let last = start;
      for (let day = 0; day < 30; day++) {
        for (let minute = 0; minute < 120; minute++) {
          last = start + day * DAY + minute * MINUTE;
          await store.write('ws_bench', user, { ops: ops(n++) }, { nowMs: last, kind: 'batch', actor: 'key:key_0123456789abcdef' });
        }
      }
      const snap = await store.snapshot('ws_bench', user);
      const points = restorePoints(snap.history.map(parseHistoryElement));
      const oldest = points[points.length - 1]!;
      const [counted, fine, coarse] = await Promise.all([
        redis.hget(keys.player('ws_bench', user), '\0h'),
        redis.memory('USAGE', keys.playerHistory('ws_bench', user), 'SAMPLES', 0),
        redis.memory('USAGE', keys.playerHistoryCoarse('ws_bench', user), 'SAMPLES', 0),
      ]);
      const reach = ((last - oldest.timeMs) / DAY).toFixed(1);
      console.log(`| ${name} | ${n} | ${points.length} | ${reach} days back | ${Number(counted).toLocaleString('en')} B | ${(Number(fine ?? 0) + Number(coarse ?? 0)).toLocaleString('en')} B |`);
    }
    console.log(`redis ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]}`);
  } finally {
    redis.disconnect();
    await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
