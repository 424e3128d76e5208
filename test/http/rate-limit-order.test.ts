// The order of the limiter and the handler, with a limiter whose verdict the test releases
// by hand (the Redis-backed behaviour is in rate-limit-fast-path.test.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { expect } from 'chai';
import { rateLimit } from '../../src/http/middleware/rate-limit.js';
import type { AppState } from '../../src/http/state.js';
import type { RateLimiter, RateLimitResult } from '../../src/store/rate-limiter.js';
import { loadConfig } from '../../src/config.js';

function heldLimiter() {
  let release!: (result: RateLimitResult) => void;
  let released = false;
  const verdict = new Promise<RateLimitResult>((resolve) => {
    release = (result) => {
      released = true;
      resolve(result);
    };
  });
  const limiter = { refuseLocally: () => undefined, hit: () => verdict } as unknown as RateLimiter;
  return { limiter, release, isReleased: () => released };
}

const verdictOf = (allowed: boolean): RateLimitResult => ({ allowed, limit: 2, remaining: allowed ? 1 : 0, resetMs: 5000 });

describe('rate limit middleware: reads alongside, writes after', () => {
  let server: Server;
  let url: string;
  let held: ReturnType<typeof heldLimiter>;
  let handlerStartedBeforeVerdict: boolean | undefined;

  before(async () => {
    const app = new Koa<AppState>();
    app.use(async (ctx, next) => {
      ctx.state.startedAt = Date.now();
      ctx.state.principal = { keyId: 'k', scope: 'write', dev: false, workspace: { id: 'w', name: 'w', plan: 'free', createdAt: '' } };
      await next();
    });
    app.use((ctx, next) => rateLimit(held.limiter, loadConfig({}))(ctx, next));
    app.use((ctx) => {
      handlerStartedBeforeVerdict = !held.isReleased();
      ctx.body = { success: true };
    });
    server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());
  beforeEach(() => {
    held = heldLimiter();
    handlerStartedBeforeVerdict = undefined;
  });

  async function until(condition: () => boolean) {
    for (let i = 0; i < 100 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  }

  it('starts a read before the verdict, and answers it once allowed', async () => {
    const answer = fetch(url, { method: 'GET' });
    await until(() => handlerStartedBeforeVerdict !== undefined);
    expect(handlerStartedBeforeVerdict).to.equal(true);
    held.release(verdictOf(true));
    const res = await answer;
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('1');
  });

  it('throws a read away when the verdict is limited', async () => {
    const answer = fetch(url, { method: 'GET' });
    await until(() => handlerStartedBeforeVerdict !== undefined);
    held.release(verdictOf(false));
    const res = await answer;
    expect(res.status).to.equal(429);
    expect(await res.json()).to.have.property('success', false);
  });

  it('starts a write only after the verdict, and never when limited', async () => {
    const allowed = fetch(url, { method: 'POST' });
    await new Promise((r) => setTimeout(r, 50));
    expect(handlerStartedBeforeVerdict).to.equal(undefined);
    held.release(verdictOf(true));
    expect((await allowed).status).to.equal(200);
    expect(handlerStartedBeforeVerdict).to.equal(false);

    held = heldLimiter();
    handlerStartedBeforeVerdict = undefined;
    const limited = fetch(url, { method: 'POST' });
    held.release(verdictOf(false));
    expect((await limited).status).to.equal(429);
    expect(handlerStartedBeforeVerdict).to.equal(undefined);
  });
});
