// What a player's history costs in Redis memory (docs/history.md): a player with 10 small keys,
// then 50 writes through the service's own write script, HISTORY_MAX_VERSIONS=50. Prints
// `MEMORY USAGE <list> SAMPLES 0` of the history list and of the player hash, for a game that
// saves one key per write, one that saves the whole player every time, and one that saves a
// 1 KB inventory; with the lists' inner nodes compressed (list-compress-depth 1, as every Redis
// we start or ship runs) and without (Redis's default, 0).
//   npx tsx bench/history-memory.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { keys } from '../src/store/keys.js';
import { PlayerDataStore } from '../src/store/players/player-data.js';
import type { Op } from '../src/store/players/script-protocol.js';
import { defineScripts } from '../src/store/redis/scripts.js';

const KEYS = ['coins', 'gems', 'level', 'xp', 'name', 'class', 'hp', 'mana', 'lastLogin', 'settings'];
const value = (key: string, n: number): unknown =>
  key === 'name' ? `Player${n % 1000}` : key === 'class' ? 'ranger' : key === 'settings' ? { music: n % 2 === 0, lang: 'en' } : key === 'lastLogin' ? 1_763_900_000 + n : 100 + n;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'history-memory-'));
  const redisServer = await startLocalRedis({ dataDir: dir, appendonly: false });
  const redis = new Redis(redisServer.url);
  defineScripts(redis);
  const store = new PlayerDataStore(redis, {
    maxKeysPerPlayer: 1000,
    maxPlayerBytes: 4 * 1024 * 1024,
    idempotencyTtlSeconds: 86_400,
    history: { intervalMs: 300_000, maxVersions: 1000, fineMs: 86_400_000, maxAgeMs: 30 * 86_400_000, maxBytes: 1024 * 1024 },
  });
  const context = { nowMs: Date.now(), kind: 'set', actor: 'key:key_0123456789abcdef' };
  const set = (key: string, n: number): Op => ({ op: 'set', key, valueJson: JSON.stringify(value(key, n)) });
  const inventory = (n: number) =>
    JSON.stringify({ items: Array.from({ length: 30 }, (_, i) => ({ id: 1000 + i, qty: (n * 7 + i) % 50, name: `item${i}` })) });
  const games = [
    ['one key per write', (n: number) => [set(KEYS[n % KEYS.length]!, n)]],
    ['all 10 keys per write', (n: number) => KEYS.map((k) => set(k, n))],
    ['a 1 KB inventory per write', (n: number): Op[] => [{ op: 'set', key: 'inventory', valueJson: inventory(n) }]],
  ] as const;
  try {
    for (const depth of ['1', '0']) {
      await redis.config('SET', 'list-compress-depth', depth);
      console.log(`list-compress-depth ${depth}:`);
      for (const [name, ops] of games) {
        const user = `${name.replace(/\W+/g, '-')}-${depth}`;
        await store.write('ws_bench', user, { ops: [...KEYS.map((k) => set(k, 0)), ...ops(0)] }, { ...context, kind: 'batch' });
        for (let n = 1; n <= 50; n++) {
          const written = ops(n);
          await store.write('ws_bench', user, { ops: written }, { ...context, kind: written.length === 1 ? 'set' : 'batch' });
        }
        const list = keys.playerHistory('ws_bench', user);
        const [entries, listBytes, hashBytes, counted] = await Promise.all([
          redis.llen(list),
          redis.memory('USAGE', list, 'SAMPLES', 0),
          redis.memory('USAGE', keys.player('ws_bench', user), 'SAMPLES', 0),
          redis.hget(keys.player('ws_bench', user), '\0h'),
        ]);
        console.log(`  ${name}: ${entries} entries; MEMORY USAGE history list ${listBytes} B, player hash ${hashBytes} B; history bytes counted (\\0h) ${counted}`);
      }
    }
    console.log(`redis ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]}`);
  } finally {
    redis.disconnect();
    await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
