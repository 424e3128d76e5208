// The service as a real process (src/main.ts): killed with SIGKILL mid-write it leaves no
// half-written entry; stopped with SIGTERM under load it finishes what it accepted and exits 0;
// two processes on one Redis count and limit exactly as one.
import { request } from 'node:http';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { decodeEntry } from '../../src/domain/entry.js';
import { keys } from '../../src/store/keys.js';
import { scanMatching } from '../../src/store/redis/scan.js';
import { incrementOneKey, spawnService, type ChildService } from '../support/child-service.js';
import { testRedisUrl } from '../support/hooks.js';
import { newWorkspace, testRedis } from '../support/service.js';

interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

/** One request on a connection of its own, so a refused connection is told apart from a dropped request. */
function post(baseUrl: string, path: string, apiKey: string, body: unknown): Promise<Answer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve) => {
    const req = request(
      baseUrl + path,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-api-key': apiKey },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        res.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
      },
    );
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(payload);
  });
}

/** A value big enough that writing it is not instantaneous, and checkable from its key alone. */
function valueFor(n: number) {
  return { n, items: Array.from({ length: 300 }, (_, i) => `${n}-${i}`), nested: { deep: { n } } };
}

async function scanPlayers(redis: Redis, workspaceId: string): Promise<Map<string, Record<string, string>>> {
  const players = new Map<string, Record<string, string>>();
  await scanMatching(redis, keys.playerHashPattern(workspaceId), async (_node, batch) => {
    // Data fields only: the player's meta (version, counts) lives under fields starting with NUL.
    for (const key of batch) {
      const fields = Object.entries(await redis.hgetall(key)).filter(([field]) => !field.startsWith('\0'));
      players.set(key, Object.fromEntries(fields));
    }
  });
  return players;
}

describe('the service process under faults', function () {
  this.timeout(60_000);
  let redis: Redis;
  const children: ChildService[] = [];

  before(() => {
    redis = testRedis();
  });
  after(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    redis.disconnect();
  });

  async function start(env: Record<string, string> = {}): Promise<ChildService> {
    const child = await spawnService({ REDIS_URL: testRedisUrl(), RATE_LIMIT_PRO: '1000000000', ...env });
    children.push(child);
    return child;
  }

  it('leaves no half-written entry when killed with SIGKILL mid-write', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const service = await start();
    let running = true;
    let seq = 0;
    const attempted = new Set<string>();
    const workers = Array.from({ length: 32 }, async (_, w) => {
      while (running) {
        const n = seq++;
        attempted.add(`u${n % 20}/s${n}`);
        const res = await post(service.baseUrl, '/data/set', ws.apiKey, { userId: `u${n % 20}`, key: `s${n}`, value: valueFor(n) });
        await post(service.baseUrl, '/data/increment', ws.apiKey, { userId: `u${n % 20}`, key: `c${w}`, amount: 0.5 });
        if (res.error) return;
      }
    });
    await new Promise((r) => setTimeout(r, 1500));
    service.process.kill('SIGKILL');
    expect((await service.exited).signal).to.equal('SIGKILL');
    running = false;
    await Promise.all(workers);

    const players = await scanPlayers(redis, ws.workspaceId);
    let entries = 0;
    for (const [hash, fields] of players) {
      const user = keys.playerKeyUserId(ws.workspaceId, hash);
      for (const [field, stored] of Object.entries(fields)) {
        entries++;
        const entry = decodeEntry(stored);
        expect(entry, `${user}/${field}: ${stored.slice(0, 80)}`).to.not.equal(undefined);
        expect(entry!.updatedAtMs).to.be.within(Date.now() - 120_000, Date.now());
        const value = JSON.parse(entry!.valueJson) as unknown;
        if (field.startsWith('s')) {
          expect(attempted.has(`${user}/${field}`)).to.equal(true);
          expect(value).to.deep.equal(valueFor(Number(field.slice(1))));
        } else {
          expect(value).to.be.a('number');
          expect((value as number) * 2).to.satisfy(Number.isInteger);
        }
      }
    }
    expect(entries).to.be.greaterThan(50);
  });

  it('on SIGTERM under load, finishes every accepted request, closes Redis and exits 0', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const service = await start();
    // A request in flight when the signal comes: its body is still arriving.
    const slowBody = JSON.stringify({ userId: 'slow', key: 'inflight', value: 'finished after SIGTERM' });
    const slow = new Promise<Answer>((resolve) => {
      const req = request(
        service.baseUrl + '/data/set',
        {
          method: 'POST',
          agent: false,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(slowBody), 'x-api-key': ws.apiKey },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body: text }));
        },
      );
      req.on('error', (err) => resolve({ error: err.message }));
      req.write(slowBody.slice(0, 10));
      setTimeout(() => req.end(slowBody.slice(10)), 800);
    });

    let running = true;
    let seq = 0;
    const answers = new Map<string, Answer>();
    const workers = Array.from({ length: 40 }, async () => {
      while (running) {
        const n = seq++;
        const answer = await post(service.baseUrl, '/data/set', ws.apiKey, { userId: `u${n % 10}`, key: `s${n}`, value: n });
        answers.set(`u${n % 10}/s${n}`, answer);
        if (answer.error === 'ECONNREFUSED') return;
      }
    });
    await new Promise((r) => setTimeout(r, 400));
    service.process.kill('SIGTERM');
    const exit = await service.exited;
    running = false;
    await Promise.all(workers);

    expect(exit.code, service.logs.slice(-5).join('\n')).to.equal(0);
    expect(service.logs.some((l) => l.includes('"msg":"stopped"'))).to.equal(true);
    expect((await slow).status).to.equal(200);
    expect(await redis.hget(keys.player(ws.workspaceId, 'slow'), 'inflight')).to.match(/,"finished after SIGTERM"\]$/);

    const stored = await scanPlayers(redis, ws.workspaceId);
    const storedIds = new Set<string>();
    for (const [hash, fields] of stored) {
      for (const field of Object.keys(fields)) storedIds.add(`${keys.playerKeyUserId(ws.workspaceId, hash)}/${field}`);
    }
    const ok = [...answers].filter(([, a]) => a.status === 200);
    const failed = [...answers].filter(([, a]) => a.status !== 200);
    // Every answered write is stored; no write was done without its answer reaching the caller.
    for (const [id] of ok) expect(storedIds.has(id), id).to.equal(true);
    for (const [id, a] of failed) {
      expect(a.error, `${id}: ${JSON.stringify(a)}`).to.be.oneOf(['ECONNREFUSED', 'ECONNRESET']);
      expect(storedIds.has(id), `${id} was written but its caller got ${a.error}`).to.equal(false);
    }
    expect(ok.length).to.be.greaterThan(20);
  });

  it('two processes on one Redis: 2,000 concurrent increments of one key end exact (10,000 in test:long)', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const [a, b] = await Promise.all([start(), start()]);
    const result = await incrementOneKey([a.baseUrl, b.baseUrl], ws.apiKey, 2000, 200);
    expect(result.statuses.every((s) => s === 200)).to.equal(true);
    const stored = decodeEntry((await redis.hget(keys.player(ws.workspaceId, 'shared'), 'count'))!);
    expect(stored!.valueJson).to.equal('2000');
  });

  it('two processes on one Redis never let a workspace past its plan limit in a window', async () => {
    const ws = await newWorkspace(redis, 'free');
    const env = { RATE_LIMIT_FREE: '25', RATE_LIMIT_WINDOW_MS: '4000' };
    const [a, b] = await Promise.all([start(env), start(env)]);
    // Two windows: in each, 120 requests spread over both processes at once; exactly 25 pass.
    // (A burst takes well under the 4 s window, even on a loaded machine.)
    for (let window = 0; window < 2; window++) {
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          fetch((i % 2 === 0 ? a : b).baseUrl + '/ping', { headers: { 'x-api-key': ws.apiKey } }).then(async (res) => {
            await res.arrayBuffer();
            return { status: res.status, remaining: res.headers.get('x-ratelimit-remaining') };
          }),
        ),
      );
      const passed = answers.filter((r) => r.status === 200);
      expect(passed, `window ${window}`).to.have.length(25);
      expect(answers.filter((r) => r.status === 429)).to.have.length(95);
      // Each of the 25 allowed slots was handed out once, whichever process asked.
      expect(new Set(passed.map((r) => r.remaining)).size).to.equal(25);
      // The next window once this one has ended (after the last, nothing is left to wait for).
      if (window === 0) {
        const ttl = await redis.pttl(keys.rateLimit(ws.workspaceId));
        await new Promise((r) => setTimeout(r, Math.max(0, ttl) + 50));
      }
    }
  });
});
