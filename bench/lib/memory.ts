// Redis bytes per stored small entry: 100,000 players with one small entry each, written in
// the service's stored form (through its write-player script, with the version and counts it keeps), against a bare HSET of the same
// field and value under the same key names. Each is the used_memory delta over the entries.
// With history on (the default) a player's first write also opens its first restore point (a
// list and its index beside the hash: docs/history.md), so the service's figure is also given
// with history off, the entry alone.
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
  /** The same with HISTORY_MAX_VERSIONS=0: the player hash alone, no restore point. */
  readonly serviceWithoutHistoryBytesPerEntry: number;
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

/** The player's keys as the write script is given them (its hash, history, index, kept answer, inbox). */
const playerKeys = (key: string) => [key, `${key}:h`, `${key}:hc`, `${key}:hm`, `${key}:i:-`, `${key}:m`] as const;

async function drop(redis: Redis, players: number) {
  for (let start = 0; start < players; start += 5000) {
    const names: string[] = [];
    for (let i = start; i < Math.min(players, start + 5000); i++) names.push(...playerKeys(keys.player(WORKSPACE, `player${i}`)));
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
  const write = { ops: [{ op: 'set', key: FIELD, valueJson: VALUE }] } as const;
  const context = { nowMs: now, kind: 'set', actor: 'bench' };
  const args = writePlayerArgs(writeLimitsArg(limits), write, context);
  const service = await measure(redis, players, (p, key) => p.writePlayer(...playerKeys(key), ...args));
  const noHistory = writePlayerArgs(writeLimitsArg({ ...limits, history: { ...limits.history, maxVersions: 0 } }), write, context);
  const withoutHistory = await measure(redis, players, (p, key) => p.writePlayer(...playerKeys(key), ...noHistory));
  return {
    players,
    field: FIELD,
    value: VALUE,
    serviceBytesPerEntry: Math.round(service),
    serviceWithoutHistoryBytesPerEntry: Math.round(withoutHistory),
    bareHsetBytesPerEntry: Math.round(bare),
    ratio: Math.round((service / bare) * 100) / 100,
  };
}
