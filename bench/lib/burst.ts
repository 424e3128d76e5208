// One tenant's burst of many-part requests, all at once, as a plan's window allows (300 requests
// on pro), against another workspace reading small values on 4 connections (each a read every
// 10 ms or so). Each part is too small to be charged alone (a player of 60 KB, a message of
// 15 KB), so what bounds a burst is the request's parts summed and one such request of a
// workspace at a time (docs/reliability.md, "Many small parts in one answer"). First the latency
// of an ordinary server's joins (30 players with load, one after another), then the bursts:
// - `gets`: 300 reads of a missing key, the cost of a burst of requests as such;
// - `acquires`: 300 acquires of 100 players each, without load (30,000 session scripts);
// - `acquires with load`: 200 acquires with load and steal of the same 100 players of 60 KB;
// - `message reads`: 200 reads of a player holding 100 messages of 15 KB.
// Run by `npm run bench:burst` and asserted by test-long/burst.test.ts. The service must give
// the free plan a limit B never reaches (BURST_SERVICE_ENV): B is on it, so that every one of its
// reads is a read (a 429 may be answered without Redis); A is on pro, with its window of 300.
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';

export const BURST_SERVICE_ENV = { RATE_LIMIT_FREE: '1000000' } as const;

const rssMb = (pid: number) => Math.round((Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096) / 1e6);

async function send(base: string, key: string, method: string, path: string, body?: unknown) {
  const started = performance.now();
  try {
    const res = await fetch(base + path, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const bytes = (await res.arrayBuffer()).byteLength;
    return { status: res.status, ms: performance.now() - started, bytes };
  } catch {
    return { status: 0, ms: performance.now() - started, bytes: 0 };
  }
}

export interface BurstRun {
  readonly figures: Record<string, unknown>;
  /** What broke the bound: B's p99 at 150 ms or more, any of B's reads not answered 200, any 5xx for A. */
  readonly problems: string[];
}

/** Runs the bursts against a service at `base` (its process `pid`, for its memory) on `redis`. */
export async function runBurst(base: string, pid: number, redis: Redis): Promise<BurstRun> {
  const ops = new AdminOperations(redis, { actor: 'burst' });
  const a = await ops.createWorkspace({ name: 'bursty', plan: 'pro' });
  const b = await ops.createWorkspace({ name: 'quiet', plan: 'free' });
  await send(base, b.apiKey, 'POST', '/data/set', { userId: 'small', key: 'coins', value: 5 });
  const players = Array.from({ length: 100 }, (_, p) => `p${p}`);
  const fill: Array<[string, unknown]> = [
    ...players.map((userId): [string, unknown] => ['/data/set', { userId, key: 'k', value: 'x'.repeat(60_000) }]),
    ...Array.from({ length: 100 }, (): [string, unknown] => ['/messages', { userId: 'inbox', message: 'm'.repeat(15_000) }]),
  ];
  for (const [at, [path, body]] of fill.entries()) {
    if (at % 250 === 249) await new Promise((r) => setTimeout(r, 10_000)); // A's window
    const res = await send(base, a.apiKey, 'POST', path, body);
    if (res.status !== 200) throw new Error(`filling A: ${path} answered ${res.status}`);
  }
  const phases: Record<string, { count: number; request: (i: number) => Promise<{ status: number; ms: number; bytes: number }> }> = {
    gets: { count: 300, request: () => send(base, a.apiKey, 'GET', '/data?userId=p0&key=none') },
    acquires: { count: 300, request: (i) => send(base, a.apiKey, 'POST', '/sessions/acquire', { players, owner: `plain-${i}`, steal: true }) },
    'acquires with load': { count: 200, request: (i) => send(base, a.apiKey, 'POST', '/sessions/acquire', { players, owner: `load-${i}`, load: true, steal: true }) },
    'message reads': { count: 200, request: () => send(base, a.apiKey, 'GET', '/messages?userId=inbox') },
  };
  // First, what the bounds cost an ordinary server: 200 joins of 30 small players with load,
  // one after another (a server's joins of one moment share one acquire), B idle.
  await new Promise((r) => setTimeout(r, 11_000)); // A's window resets
  const joiners = Array.from({ length: 30 }, (_, p) => `join${p}`);
  for (const userId of joiners) await send(base, a.apiKey, 'POST', '/data/set', { userId, key: 'coins', value: { coins: 5, inventory: ['a', 'b', 'c'] } });
  const joins: number[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await send(base, a.apiKey, 'POST', '/sessions/acquire', { players: joiners, owner: 'server', load: true, steal: true });
    if (res.status !== 200) throw new Error(`a join answered ${res.status}`);
    if (i >= 20) joins.push(res.ms);
  }
  joins.sort((x, y) => x - y);
  const problems: string[] = [];
  const figures: Record<string, unknown> = {
    'joins of 30 players': { medianMs: Math.round(joins[joins.length >> 1]! * 100) / 100, p99Ms: Math.round(joins[Math.floor(joins.length * 0.99)]! * 100) / 100 },
  };
  for (const [name, phase] of Object.entries(phases)) {
    await new Promise((r) => setTimeout(r, 11_000)); // A's window resets, its byte budget refills
    let peak = rssMb(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
    const latencies: number[] = [];
    let bFailed = 0;
    let stop = false;
    const quiet = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) {
          const res = await send(base, b.apiKey, 'GET', '/data?userId=small&key=coins');
          latencies.push(res.ms);
          if (res.status !== 200) bFailed++;
          await new Promise((r) => setTimeout(r, 10));
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: phase.count }, (_, i) => phase.request(i)));
    const seconds = (performance.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await quiet;
    clearInterval(sampler);
    latencies.sort((x, y) => x - y);
    const statuses: Record<string, number> = {};
    for (const res of answers) statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    figures[name] = {
      aStatuses: statuses,
      aSeconds: Math.round(seconds * 100) / 100,
      aMbAnswered: Math.round(answers.reduce((n, r) => n + r.bytes, 0) / 1e5) / 10,
      bRequests: latencies.length,
      bP50: Math.round(latencies[Math.floor(latencies.length * 0.5)]!),
      bP99: Math.round(latencies[Math.floor(latencies.length * 0.99)]!),
      bMax: Math.round(latencies[latencies.length - 1]!),
      bNot200: bFailed,
      rssPeakMb: peak,
    };
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    if (p99 >= 150) problems.push(`${name}: the neighbour's p99 was ${Math.round(p99)} ms`);
    if (bFailed > 0) problems.push(`${name}: ${bFailed} of the neighbour's reads were not answered 200`);
    if (answers.some((r) => r.status >= 500 || r.status === 0)) problems.push(`${name}: A got 5xx or lost connections`);
  }
  return { figures, problems };
}
