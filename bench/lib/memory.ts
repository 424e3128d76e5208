// Redis bytes per stored small entry: 100,000 players with one small entry each, written in
// the service's stored form (through its write-player script, with the version and counts it keeps), against a bare HSET of the same
// field and value under the same key names. Each is the used_memory delta over the entries.
import type { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { playerLimitsOf } from '../../src/store/players/player-data.js';
import { writeLimitsArg, writePlayerArgs } from '../../src/store/players/script-protocol.js';
import { keys } from '../../src/store/keys.js';
import { usedMemory } from './redis-stats.js';

export interface MemoryResult {
  readonly players: number;
  readonly field: string;
  readonly value: string;
  readonly serviceBytesPerEntry: number;
  readonly bareHsetBytesPerEntry: number;
  readonly ratio: number;
}

const WORKSPACE = 'bench-memory';
const FIELD = 'coins';
const VALUE = '42';

async function fill(redis: Redis, players: number, write: (p: ReturnType<Redis['pipeline']>, key: string) => void) {
  for (let start = 0; start < players; start += 5000) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(players, start + 5000); i++) write(pipeline, keys.player(WORKSPACE, `player${i}`));
    await pipeline.exec();
  }
}

async function drop(redis: Redis, players: number) {
  for (let start = 0; start < players; start += 5000) {
    const names: string[] = [];
    for (let i = start; i < Math.min(players, start + 5000); i++) names.push(keys.player(WORKSPACE, `player${i}`));
    await redis.del(...names);
  }
}

async function measure(redis: Redis, players: number, write: Parameters<typeof fill>[2]): Promise<number> {
  const before = await usedMemory(redis);
  await fill(redis, players, write);
  const after = await usedMemory(redis);
  await drop(redis, players);
  return (after - before) / players;
}

export async function measureMemory(redis: Redis, players = 100_000): Promise<MemoryResult> {
  const now = Date.now();
  const bare = await measure(redis, players, (p, key) => p.hset(key, FIELD, VALUE));
  const limits = playerLimitsOf(loadConfig({}));
  const args = writePlayerArgs(writeLimitsArg(limits), { ops: [{ op: 'set', key: FIELD, valueJson: VALUE }] }, { nowMs: now, kind: 'set', actor: 'bench' });
  const service = await measure(redis, players, (p, key) => p.writePlayer(key, `${key}:h`, `${key}:hc`, `${key}:hm`, `${key}:i:-`, `${key}:m`, ...args));
  return {
    players,
    field: FIELD,
    value: VALUE,
    serviceBytesPerEntry: Math.round(service),
    bareHsetBytesPerEntry: Math.round(bare),
    ratio: Math.round((service / bare) * 100) / 100,
  };
}
