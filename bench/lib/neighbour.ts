// The noisy-neighbour run (issue 17, finding 1; issue 27), shared by `npm run test:long`
// (test-long/noisy-neighbour.test.ts, which asserts on it) and `npm run bench:neighbour` (which
// prints it): while workspace A reads and writes its largest allowed players as fast as its plan
// and byte budget allow, through every heavy path in turn (whole reads, acquires with load, 1 MB
// sets plain, gzip and chunked, batches of many players, deletes of everything that copy a whole
// player into its restore point, versions reads, batches deleting whole players), workspace B
// on the same instance reads one small value 4 connections at a time; B's latency and 5xx, A's requests and bytes,
// and the instance's memory are measured against the same instance idle.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';

export const PHASE_MS = 10_000;
/**
 * The service's settings for the run: restore points a minute apart (HISTORY_INTERVAL_SECONDS,
 * 300 by default), so that by the last phase a new point has opened since A's large players were
 * last written, and a delete of everything copies the whole player into it, as a tenant who
 * waits for a new interval gets it to.
 */
export const NEIGHBOUR_SERVICE_ENV = { HISTORY_INTERVAL_SECONDS: '60' } as const;
/** Four values of about 1 MB: a player just under MAX_PLAYER_BYTES (4 MiB). */
export const BIG_KEYS = 4;
export const BIG_VALUE = 'x'.repeat(1_040_000);

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

type Encoding = 'plain' | 'gzip' | 'chunked';

async function send(base: string, key: string, method: string, path: string, body?: unknown, encoding: Encoding = 'plain') {
  const started = performance.now();
  const headers: Record<string, string> = { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  let payload: BodyInit | undefined;
  if (body !== undefined) {
    const json = Buffer.from(JSON.stringify(body));
    if (encoding === 'gzip') {
      headers['content-encoding'] = 'gzip';
      payload = gzipSync(json);
    } else if (encoding === 'chunked') {
      // A stream: fetch sends it chunked, with no Content-Length.
      payload = new ReadableStream({
        start(controller) {
          for (let at = 0; at < json.length; at += 65_536) controller.enqueue(json.subarray(at, at + 65_536));
          controller.close();
        },
      });
    } else payload = json;
  }
  let res: Response;
  try {
    res = await fetch(base + path, { method, headers, ...(payload === undefined ? {} : { body: payload, duplex: 'half' }) } as RequestInit);
    await res.arrayBuffer();
  } catch {
    // A streamed body cut off with 429 while it was still being sent (the service answers and
    // closes the connection): fetch sees the socket closed under its write. Status 0: cut off.
    return { status: 0, ms: performance.now() - started, retryAfter: 1 };
  }
  return { status: res.status, ms: performance.now() - started, retryAfter: Number(res.headers.get('retry-after') ?? 1) };
}

/** B's steady traffic for one phase: 4 connections' worth of small reads, 100 a second. */
async function neighbour(base: string, key: string, until: number) {
  const latencies: number[] = [];
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (Date.now() < until) {
        const { status, ms } = await send(base, key, 'GET', '/data?userId=small&key=coins');
        statuses.push(status);
        latencies.push(ms);
        await new Promise((r) => setTimeout(r, 40));
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    requests: statuses.length,
    fiveHundreds: statuses.filter((s) => s >= 500).length,
    p50: Math.round(percentile(latencies, 50) * 100) / 100,
    p99: Math.round(percentile(latencies, 99) * 100) / 100,
    max: Math.round((latencies.at(-1) ?? NaN) * 100) / 100,
  };
}


export interface NeighbourRun {
  /** Per phase ('neighbourIdle', then each of A's paths): what B saw, and what A got. */
  readonly figures: Record<string, unknown>;
  /** Each broken promise, in words: B's 5xx or p99 at 150 ms or more, A's 5xx, A past its plan or budget. */
  readonly problems: string[];
  readonly rssIdleMb: number;
  readonly rssPeakMb: number;
}

/**
 * Runs the scenario against a service at `base` (its process `pid`, for its memory) on `redis`,
 * with the service's byte budget `budget` (WORKSPACE_BYTES_PER_SECOND).
 */
export async function runNoisyNeighbour(base: string, pid: number, redis: Redis, budget: number): Promise<NeighbourRun> {
  const ops = new AdminOperations(redis, { actor: 'neighbour' });
  const [a, b] = [await ops.createWorkspace({ name: 'noisy', plan: 'pro' }), await ops.createWorkspace({ name: 'quiet', plan: 'pro' })];
  const seeded = await send(base, b.apiKey, 'POST', '/data/set', { userId: 'small', key: 'coins', value: 5 });
  if (seeded.status !== 200) throw new Error(`B's first write answered ${seeded.status}`);
  // Fill A's largest allowed players (the writes count against A's plan: 20 players x 4 keys,
  // and against its byte budget: a 429 of the budget is waited out). big0-9 for the reads,
  // acquires and deletes of everything; big10-19 for the last phase's batches.
  for (let p = 0; p < 20; p++) {
    for (let k = 0; k < BIG_KEYS; k++) {
      let res = await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${p}`, key: `k${k}`, value: BIG_VALUE });
      while (res.status === 429) {
        await new Promise((r) => setTimeout(r, res.retryAfter * 1000));
        res = await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${p}`, key: `k${k}`, value: BIG_VALUE });
      }
      if (res.status !== 200) throw new Error(`filling A answered ${res.status}`);
    }
  }
  await new Promise((r) => setTimeout(r, 10_000)); // A's window resets, its byte budget refills

  const rssIdle = rssMb(pid);
  const idle = await neighbour(base, b.apiKey, Date.now() + PHASE_MS);

  // Each heavy path in turn, A as fast as its plan allows with 8 requests in flight (a 429
  // waited out briefly), B measured meanwhile.
  const paths: Record<string, (w: number, i: number) => Promise<{ status: number; bytes: number }>> = {
    'whole reads and 1 MB sets': async (w, i) => {
      const write = i % 5 === 4;
      const res = write
        ? await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${(w + i) % 10}`, key: 'k0', value: BIG_VALUE })
        : await send(base, a.apiKey, 'GET', `/data?userId=big${(w + i) % 10}`);
      return { status: res.status, bytes: write ? 2 * BIG_VALUE.length : BIG_KEYS * BIG_VALUE.length };
    },
    'acquires with load and steal': async (w, i) => {
      // The shortest lease (30 s): gone by the last phase, whose deletes hold no session.
      const res = await send(base, a.apiKey, 'POST', '/sessions/acquire', { userId: `big${(w + i) % 10}`, owner: `job-${w}`, load: true, steal: true, ttlSeconds: 30 });
      return { status: res.status, bytes: BIG_KEYS * BIG_VALUE.length };
    },
    ...Object.fromEntries(
      (['plain', 'gzip', 'chunked'] as const).map((encoding) => [
        `1 MB sets, ${encoding}`,
        async (w: number, i: number) => {
          const res = await send(base, a.apiKey, 'POST', '/data/set', { userId: `set${w}`, key: `k${i % 3}`, value: BIG_VALUE }, encoding);
          return { status: res.status, bytes: 2 * BIG_VALUE.length };
        },
      ]),
    ),
    'batches of 10 players': async (w, i) => {
      const players = Array.from({ length: 10 }, (_, p) => ({ userId: `batch${w}-${p}`, ops: [{ op: 'set', key: `k${i % 2}`, value: BIG_VALUE.slice(0, 95_000) }] }));
      const res = await send(base, a.apiKey, 'POST', '/data/batch', { players });
      return { status: res.status, bytes: 2 * 10 * 95_000 };
    },
    // Then: the large players' last writes are over a minute old (NEIGHBOUR_SERVICE_ENV), so the
    // first delete of each copies all of it into a new restore point, inside Redis, for a body of
    // a few bytes; 8 of them start at once. Then the versions of every large player, each read
    // rebuilt from the whole player and its restore points for an answer of a few hundred bytes.
    'deletes of everything, then versions reads': async (w, i) => {
      const res =
        i === 0
          ? await send(base, a.apiKey, 'POST', '/data/delete', { userId: `big${w}` })
          : await send(base, a.apiKey, 'GET', `/data/versions?userId=big${(w + i) % 10}`);
      return { status: res.status, bytes: BIG_KEYS * BIG_VALUE.length };
    },
    // Last: a batch of 10 players (big10-19, last written over a minute before) deleting every
    // key of each, which copies each whole player into a new restore point; 8 such batches at
    // once, then again (the keys gone: small deletes). A batch's players are written one after
    // another, each checking the debt the ones before it left (saves/player-turns.ts).
    'batches deleting 10 whole players': async () => {
      const players = Array.from({ length: 10 }, (_, p) => ({
        userId: `big${10 + p}`,
        ops: Array.from({ length: BIG_KEYS }, (_, k) => ({ op: 'delete', key: `k${k}` })),
      }));
      const res = await send(base, a.apiKey, 'POST', '/data/batch', { players });
      return { status: res.status, bytes: 0 };
    },
  };

  let peak = rssIdle;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
  const figures: Record<string, unknown> = { neighbourIdle: idle };
  const problems: string[] = [];
  if (idle.fiveHundreds > 0) problems.push(`idle: the neighbour got ${idle.fiveHundreds} 5xx`);
  for (const [name, request] of Object.entries(paths)) {
    await new Promise((r) => setTimeout(r, 10_000)); // A's window resets, its byte budget refills
    const started = Date.now();
    const until = started + PHASE_MS;
    const noisyStatuses: number[] = [];
    let noisyBytes = 0;
    const noisy = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; Date.now() < until; i++) {
          const res = await request(w, i);
          noisyStatuses.push(res.status);
          if (res.status === 200) noisyBytes += res.bytes;
          if (res.status === 429 || res.status === 0) await new Promise((r) => setTimeout(r, 200));
        }
      }),
    );
    const loaded = await neighbour(base, b.apiKey, until);
    await noisy;
    const noisySeconds = (Date.now() - started) / 1000;
    const served = noisyStatuses.filter((s) => s === 200).length;
    figures[name] = {
      neighbour: loaded,
      p99Factor: Math.round((loaded.p99 / idle.p99) * 100) / 100,
      noisyServed: served,
      noisy429: noisyStatuses.filter((s) => s === 429).length,
      noisyCutOff: noisyStatuses.filter((s) => s === 0).length,
      noisyOther: noisyStatuses.filter((s) => s !== 200 && s !== 429 && s !== 0).length,
      noisyMbMoved: Math.round(noisyBytes / 1e5) / 10,
    };
    if (loaded.fiveHundreds > 0) problems.push(`${name}: the neighbour got ${loaded.fiveHundreds} 5xx`);
    if (loaded.p99 >= 150) problems.push(`${name}: the neighbour's p99 was ${loaded.p99} ms`);
    if (noisyStatuses.some((s) => s >= 500)) problems.push(`${name}: A got 5xx`);
    // Anything else (a 409 of a session still held, a 404) means the path was not exercised.
    const other = noisyStatuses.filter((s) => s !== 200 && s !== 429 && s !== 0 && s < 500);
    if (other.length > 0) problems.push(`${name}: A got ${other.length} answers of ${[...new Set(other)].join(', ')}`);
    // The plan bounds A's requests; the byte budget its bytes: the rate over the phase plus a
    // burst of one max-size player and a burst of debt, and the transfers in flight when it was spent.
    if (served > 300) problems.push(`${name}: A was served ${served} requests`);
    if (budget > 0 && noisyBytes > budget * noisySeconds + 2 * 4 * 1024 * 1024 + 8 * BIG_KEYS * BIG_VALUE.length) {
      problems.push(`${name}: A moved ${noisyBytes} bytes`);
    }
  }
  clearInterval(sampler);
  return { figures, problems, rssIdleMb: rssIdle, rssPeakMb: peak };
}
