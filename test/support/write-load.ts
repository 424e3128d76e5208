// A steady write load against the HTTP API that remembers every write the service
// acknowledged, so a test can later prove that none of them is missing from Redis.
// Sets write unique keys (each acknowledged set must be found with its value); increments hit a
// few counters per player (each counter must hold at least the acknowledged increments, and at
// most the attempted ones, since a request that timed out may still have been applied).
import type { RedisClient } from '../../src/store/redis/redis.js';
import { decodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';

export interface LoadOptions {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly users: readonly string[];
  readonly workers: number;
  /** Per-request client timeout. */
  readonly timeoutMs?: number;
}

export interface Outcome {
  /** When the request was sent and when its answer arrived. */
  readonly sentAt: number;
  readonly at: number;
  readonly user: string;
  readonly ok: boolean;
  readonly status: number;
}

export interface LoadResult {
  /** `user\u0000key` -> value of every acknowledged set, and when it was acknowledged. */
  readonly sets: Map<string, { value: number; at: number }>;
  readonly incrementsAcked: Map<string, number>;
  readonly incrementsAttempted: Map<string, number>;
  readonly outcomes: Outcome[];
}

export interface RunningLoad {
  stop(): Promise<LoadResult>;
}

const SEP = '\u0000';

export function startWriteLoad(options: LoadOptions): RunningLoad {
  const result: LoadResult = { sets: new Map(), incrementsAcked: new Map(), incrementsAttempted: new Map(), outcomes: [] };
  let running = true;
  let seq = 0;
  const post = async (path: string, body: unknown): Promise<number> => {
    try {
      const res = await fetch(options.baseUrl + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': options.apiKey },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(options.timeoutMs ?? 3000),
      });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  };
  const worker = async (w: number) => {
    while (running) {
      const n = seq++;
      const user = options.users[n % options.users.length]!;
      if (n % 2 === 0) {
        const key = `s${n}`;
        const sentAt = Date.now();
        const status = await post('/data/set', { userId: user, key, value: n });
        const at = Date.now();
        if (status === 200) result.sets.set(user + SEP + key, { value: n, at });
        result.outcomes.push({ sentAt, at, user, ok: status === 200, status });
      } else {
        const id = user + SEP + `c${w % 4}`;
        result.incrementsAttempted.set(id, (result.incrementsAttempted.get(id) ?? 0) + 1);
        const sentAt = Date.now();
        const status = await post('/data/increment', { userId: user, key: `c${w % 4}` });
        const at = Date.now();
        if (status === 200) result.incrementsAcked.set(id, (result.incrementsAcked.get(id) ?? 0) + 1);
        result.outcomes.push({ sentAt, at, user, ok: status === 200, status });
      }
      // A failing request returns at once; do not spin on a store that is down.
      if (result.outcomes.at(-1)?.ok === false) await new Promise((r) => setTimeout(r, 20));
    }
  };
  const workers = Array.from({ length: options.workers }, (_, w) => worker(w));
  return {
    async stop() {
      running = false;
      await Promise.all(workers);
      return result;
    },
  };
}

export interface Verification {
  readonly acknowledged: number;
  readonly missingSets: Array<{ id: string; at: number }>;
  /** Acknowledged increments not reflected in the final counters. */
  readonly missingIncrements: number;
  /** Counters holding more than was attempted: would mean a write applied twice. */
  readonly overcounted: number;
}

export async function verifyWrites(redis: RedisClient, workspaceId: string, load: LoadResult): Promise<Verification> {
  const missingSets: Array<{ id: string; at: number }> = [];
  let missingIncrements = 0;
  let overcounted = 0;
  const read = async (id: string) => {
    const [user, key] = id.split(SEP) as [string, string];
    const stored = await redis.hget(keys.player(workspaceId, user), key);
    return stored === null ? undefined : decodeEntry(stored);
  };
  for (const [id, { value, at }] of load.sets) {
    const entry = await read(id);
    if (!entry || entry.valueJson !== String(value)) missingSets.push({ id, at });
  }
  let acknowledged = load.sets.size;
  for (const [id, attempted] of load.incrementsAttempted) {
    const acked = load.incrementsAcked.get(id) ?? 0;
    acknowledged += acked;
    const entry = await read(id);
    const final = entry ? Number(entry.valueJson) : 0;
    if (final < acked) missingIncrements += acked - final;
    if (final > attempted) overcounted++;
  }
  return { acknowledged, missingSets, missingIncrements, overcounted };
}
