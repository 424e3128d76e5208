// What a player's history costs in Redis memory (docs/history.md): a player with 10 small keys,
// then 50 writes through the service's own write script, HISTORY_MAX_VERSIONS=50. Prints
// `MEMORY USAGE <list> SAMPLES 0` of the history list and of the player hash, for a game that
// saves one key per write and for one that saves the whole player every time.
//   npx tsx bench/history-memory.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startLocalRedis } from '../src/dev/local-redis.js';
import { keys } from '../src/store/keys.js';
import { PlayerDataStore, type Op } from '../src/store/players/player-data.js';
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
    history: { maxVersions: 50, maxAgeMs: 7 * 86_400_000, maxBytes: 1024 * 1024 },
  });
  const context = { nowMs: Date.now(), kind: 'set', actor: 'key:key_0123456789abcdef' };
  const set = (key: string, n: number): Op => ({ op: 'set', key, valueJson: JSON.stringify(value(key, n)) });
  try {
    for (const [name, perWrite] of [['one key per write', 1], ['all 10 keys per write', 10]] as const) {
      const user = name.startsWith('one') ? 'one' : 'all';
      await store.write('ws_bench', user, { ops: KEYS.map((k) => set(k, 0)) }, { ...context, kind: 'batch' });
      for (let n = 1; n <= 50; n++) {
        const ops = perWrite === 1 ? [set(KEYS[n % KEYS.length]!, n)] : KEYS.map((k) => set(k, n));
        await store.write('ws_bench', user, { ops }, { ...context, kind: perWrite === 1 ? 'set' : 'batch' });
      }
      const list = keys.playerHistory('ws_bench', user);
      const [entries, listBytes, hashBytes, counted] = await Promise.all([
        redis.llen(list),
        redis.memory('USAGE', list, 'SAMPLES', 0),
        redis.memory('USAGE', keys.player('ws_bench', user), 'SAMPLES', 0),
        redis.hget(keys.player('ws_bench', user), '\0h'),
      ]);
      console.log(`${name}: ${entries} entries; MEMORY USAGE history list ${listBytes} B, player hash ${hashBytes} B; history bytes counted (\\0h) ${counted}`);
    }
    console.log(`redis ${(await redis.info('server')).match(/redis_version:(\S+)/)?.[1]}`);
  } finally {
    redis.disconnect();
    await redisServer.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
