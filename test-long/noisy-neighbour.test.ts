// A noisy neighbour (issue 17, finding 1): while workspace A reads and writes its largest
// allowed players as fast as its plan allows, workspace B on the same instance gets no 5xx,
// and its latency and the instance's memory are measured against the same instance idle.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { spawnService, type ChildService } from '../test/support/child-service.js';
import { testRedisUrl } from '../test/support/hooks.js';
import { newWorkspace, testRedis } from '../test/support/service.js';
import { report } from './report.js';

const PHASE_MS = 10_000;
/** The service's byte budget per workspace (WORKSPACE_BYTES_PER_SECOND, 8 MiB a second by default). */
const budget = Number(process.env.WORKSPACE_BYTES_PER_SECOND ?? 8 * 1024 * 1024);
/** Four values of about 1 MB: a player just under MAX_PLAYER_BYTES (4 MiB). */
const BIG_KEYS = 4;
const BIG_VALUE = 'x'.repeat(1_040_000);

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

async function send(base: string, key: string, method: string, path: string, body?: unknown) {
  const started = performance.now();
  const res = await fetch(base + path, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await res.arrayBuffer();
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

describe('a noisy neighbour', function () {
  this.timeout(240_000);
  let child: ChildService | undefined;
  after(() => child?.process.kill('SIGKILL'));

  it('leaves another workspace served, with its latency and the memory measured', async () => {
    const redis = testRedis();
    const [a, b] = [await newWorkspace(redis, 'pro', 'noisy'), await newWorkspace(redis, 'pro', 'quiet')];
    child = await spawnService({ REDIS_URL: testRedisUrl(), LOG_LEVEL: 'warn' }).catch(async () =>
      spawnService({ REDIS_URL: testRedisUrl() }),
    );
    const base = child.baseUrl;
    const pid = child.process.pid!;
    expect((await send(base, b.apiKey, 'POST', '/data/set', { userId: 'small', key: 'coins', value: 5 })).status).to.equal(200);
    // Fill A's largest allowed players (the writes count against A's plan: 10 players x 4 keys,
    // and against its byte budget: a 429 of the budget is waited out).
    for (let p = 0; p < 10; p++) {
      for (let k = 0; k < BIG_KEYS; k++) {
        let res = await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${p}`, key: `k${k}`, value: BIG_VALUE });
        while (res.status === 429) {
          await new Promise((r) => setTimeout(r, res.retryAfter * 1000));
          res = await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${p}`, key: `k${k}`, value: BIG_VALUE });
        }
        expect(res.status).to.equal(200);
      }
    }
    await new Promise((r) => setTimeout(r, 10_000)); // A's window resets, its byte budget refills

    const rssIdle = rssMb(pid);
    const idle = await neighbour(base, b.apiKey, Date.now() + PHASE_MS);

    // A: whole reads of its 4 MiB players and 1 MB writes, 8 at a time, as fast as its plan allows.
    let peak = rssIdle;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 100);
    const started = Date.now();
    const until = started + PHASE_MS;
    const noisyStatuses: number[] = [];
    let noisyBytes = 0;
    const noisy = Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = 0; Date.now() < until; i++) {
          const res =
            i % 5 === 4
              ? await send(base, a.apiKey, 'POST', '/data/set', { userId: `big${(w + i) % 10}`, key: 'k0', value: BIG_VALUE })
              : await send(base, a.apiKey, 'GET', `/data?userId=big${(w + i) % 10}`);
          noisyStatuses.push(res.status);
          if (res.status === 200) noisyBytes += i % 5 === 4 ? BIG_VALUE.length : BIG_KEYS * BIG_VALUE.length;
          if (res.status === 429) await new Promise((r) => setTimeout(r, 200));
        }
      }),
    );
    const loaded = await neighbour(base, b.apiKey, until);
    await noisy;
    const noisySeconds = (Date.now() - started) / 1000;
    clearInterval(sampler);
    redis.disconnect();

    const served = noisyStatuses.filter((s) => s === 200).length;
    report('noisy-neighbour', {
      neighbourIdle: idle,
      neighbourLoaded: loaded,
      p50Factor: Math.round((loaded.p50 / idle.p50) * 100) / 100,
      p99Factor: Math.round((loaded.p99 / idle.p99) * 100) / 100,
      noisyServed: served,
      noisy429: noisyStatuses.filter((s) => s === 429).length,
      noisyOther: noisyStatuses.filter((s) => s !== 200 && s !== 429).length,
      bytesMovedByNoisyMb: Math.round(noisyBytes / 1e5) / 10,
      byteBudgetPerSecond: budget,
      rssIdleMb: rssIdle,
      rssPeakMb: peak,
    });
    expect(idle.fiveHundreds).to.equal(0);
    expect(loaded.fiveHundreds, 'the neighbour got 5xx').to.equal(0);
    expect(noisyStatuses.filter((s) => s >= 500)).to.deep.equal([]);
    // The plan bounds what A can take: 300 requests per 10 s, each at most 4 MiB; and the byte
    // budget bounds its bytes: the rate over the phase plus one burst (a max-size player) and
    // the requests in flight when the burst was spent (each admitted with its bytes).
    expect(served).to.be.at.most(300);
    if (budget > 0) expect(noisyBytes).to.be.at.most(budget * noisySeconds + 4 * 1024 * 1024 + 8 * BIG_KEYS * BIG_VALUE.length);
    // Bounded memory: at most 8 large reads in flight (store/players/bulk-reads.ts), about 4 copies of
    // 4 MiB each, over the idle process.
    expect(peak - rssIdle, 'memory grew past the bound of the large reads in flight').to.be.below(8 * 4 * 4 + 150);
  });
});
