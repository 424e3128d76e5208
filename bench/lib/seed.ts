// Fills the bench Redis: many pro workspaces with one key each (so that rotating keys per
// request spreads the load and no plan limit binds), players with 10 small entries each, and
// one free workspace pushed over its limit for the 429 scenario.
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { encodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { REFERENCE_FIELD, REFERENCE_KEY } from '../references/listen.js';

export const PLAYERS_PER_WORKSPACE = 10;
export const KEYS_PER_PLAYER = 10;

export interface Seeded {
  /** Raw API keys of the pro workspaces, in the same order as workspaceIds. */
  readonly apiKeys: readonly string[];
  readonly workspaceIds: readonly string[];
  /** Key of the free workspace that is over its limit for the whole run. */
  readonly limitedKey: string;
}

async function inBatches<T>(count: number, batch: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += batch) {
    const end = Math.min(count, start + batch);
    const made = await Promise.all(Array.from({ length: end - start }, (_, j) => make(start + j)));
    out.push(...made);
  }
  return out;
}

export function playerId(i: number): string {
  return `u${i}`;
}

export function dataKey(i: number): string {
  return `k${i}`;
}

export async function seed(redis: Redis, workspaces: number): Promise<Seeded> {
  const ops = new AdminOperations(redis);
  const created = await inBatches(workspaces, 100, (i) =>
    ops.createWorkspace({ name: `bench ${i}`, plan: 'pro', id: benchWorkspaceId(i) }),
  );

  let pipeline = redis.pipeline();
  const now = Date.now();
  for (const ws of created) {
    for (let p = 0; p < PLAYERS_PER_WORKSPACE; p++) {
      const fields: string[] = [];
      for (let k = 0; k < KEYS_PER_PLAYER; k++) fields.push(dataKey(k), encodeEntry(String(k * 10 + p), now));
      pipeline.hset(keys.player(ws.workspaceId, playerId(p)), ...fields);
    }
    if (pipeline.length >= 1000) {
      await pipeline.exec();
      pipeline = redis.pipeline();
    }
  }
  pipeline.hset(REFERENCE_KEY, REFERENCE_FIELD, encodeEntry('42', now));
  await pipeline.exec();

  const limited = await ops.createWorkspace({ name: 'bench over limit', plan: 'free', id: 'bench-limited' });
  return { apiKeys: created.map((c) => c.apiKey), workspaceIds: created.map((c) => c.workspaceId), limitedKey: limited.apiKey };
}

/** Zero-padded to 12 digits, as redis-benchmark writes __rand_int__, so both reach the same keys. */
export function benchWorkspaceId(i: number): string {
  return `bench-${String(i).padStart(12, '0')}`;
}
