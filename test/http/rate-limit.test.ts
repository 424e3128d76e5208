// Plan limits: a fixed window per workspace, shared by every instance, with headers on every answer.
import { expect } from 'chai';
import { call, client, newWorkspace, useService, startTestService } from '../support/service.js';

async function burst(api: ReturnType<typeof client>, n: number) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await api.get('/ping'));
  return out;
}

describe('rate limits by plan', () => {
  const t = useService();

  it('free: 60 requests per 10 s window, the 61st is 429 with Retry-After', async () => {
    const api = client(t.service, (await newWorkspace(t.redis, 'free')).apiKey);
    const ok = await burst(api, 60);
    expect(ok.map((r) => r.status)).to.deep.equal(Array(60).fill(200));
    expect(ok[0]!.headers.get('x-ratelimit-limit')).to.equal('60');
    expect(ok[0]!.headers.get('x-ratelimit-remaining')).to.equal('59');
    expect(ok[59]!.headers.get('x-ratelimit-remaining')).to.equal('0');
    const reset = Number(ok[0]!.headers.get('x-ratelimit-reset'));
    expect(reset).to.be.within(1, 10);

    const limited = await api.post('/data/set', { userId: 1, key: 'k', value: 1 });
    expect(limited.status).to.equal(429);
    expect(limited.body.success).to.equal(false);
    expect(limited.body.error).to.match(/Rate limit exceeded.*free plan allows 60 requests per 10 s/);
    expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 10);
    expect(limited.headers.get('x-ratelimit-limit')).to.equal('60');
    expect(limited.headers.get('x-ratelimit-remaining')).to.equal('0');
    expect(limited.headers.get('x-ratelimit-reset')).to.equal(limited.headers.get('retry-after'));
    // A refused write writes nothing.
    expect((await api.get('/data?userId=1')).status).to.equal(429);
  });

  it('pro: 300 requests per window, the 301st is 429', async () => {
    const api = client(t.service, (await newWorkspace(t.redis, 'pro')).apiKey);
    const statuses = (await Promise.all(Array.from({ length: 300 }, () => api.get('/ping')))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).to.have.length(300);
    const over = await api.get('/ping');
    expect(over.status).to.equal(429);
    expect(over.headers.get('x-ratelimit-limit')).to.equal('300');
  });

  it('counts per workspace: one workspace over its limit does not affect another', async () => {
    const a = client(t.service, (await newWorkspace(t.redis, 'free')).apiKey);
    const b = client(t.service, (await newWorkspace(t.redis, 'free')).apiKey);
    await burst(a, 61);
    expect((await a.get('/ping')).status).to.equal(429);
    expect((await b.get('/ping')).status).to.equal(200);
  });

  it('counts every key of a workspace against one budget', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    const { AdminOperations } = await import('../../src/admin/operations.js');
    const second = await new AdminOperations(t.redis).createKey(ws.workspaceId);
    await burst(client(t.service, ws.apiKey), 30);
    await burst(client(t.service, second.apiKey), 30);
    expect((await call(t.service, 'GET', '/ping', { key: ws.apiKey })).status).to.equal(429);
  });

  it('does not count requests refused for a missing or bad key', async () => {
    const ws = await newWorkspace(t.redis, 'free');
    for (let i = 0; i < 70; i++) await call(t.service, 'GET', '/ping', { key: 'pds_' + 'Z'.repeat(40) });
    const res = await call(t.service, 'GET', '/ping', { key: ws.apiKey });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-ratelimit-remaining')).to.equal('59');
  });

  it('accepts requests again once the window resets', async () => {
    const fast = await startTestService({ RATE_LIMIT_WINDOW_MS: '700', RATE_LIMIT_FREE: '3' });
    try {
      const api = client(fast, (await newWorkspace(t.redis, 'free')).apiKey);
      expect((await burst(api, 4)).map((r) => r.status)).to.deep.equal([200, 200, 200, 429]);
      await new Promise((r) => setTimeout(r, 800));
      const again = await api.get('/ping');
      expect(again.status).to.equal(200);
      expect(again.headers.get('x-ratelimit-remaining')).to.equal('2');
    } finally {
      await fast.close();
    }
  });

  it('shares one budget across two instances of the service: together they never pass more than the plan', async () => {
    // Default leases. Each instance gets more requests than the whole budget, so neither can be
    // left holding requests it leased and did not use: exactly the budget passes.
    const other = await startTestService();
    try {
      const ws = await newWorkspace(t.redis, 'free');
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => call(i % 2 ? t.service : other, 'GET', '/ping', { key: ws.apiKey })),
      );
      const passed = results.filter((r) => r.status === 200);
      expect(passed).to.have.length(60);
      expect(results.filter((r) => r.status === 429)).to.have.length(140);
      // Each of the 60 slots of the window was handed out once, whichever instance answered.
      expect(new Set(passed.map((r) => r.headers.get('x-ratelimit-remaining'))).size).to.equal(60);
    } finally {
      await other.close();
    }
  });

  it('with RATE_LIMIT_LEASE_AHEAD=0 shares one budget exactly, however the requests split', async () => {
    const [one, two] = await Promise.all([
      startTestService({ RATE_LIMIT_LEASE_AHEAD: '0' }),
      startTestService({ RATE_LIMIT_LEASE_AHEAD: '0' }),
    ]);
    try {
      const ws = await newWorkspace(t.redis, 'free');
      const results = await Promise.all(
        Array.from({ length: 100 }, (_, i) => call(i % 2 ? one : two, 'GET', '/ping', { key: ws.apiKey })),
      );
      expect(results.filter((r) => r.status === 200)).to.have.length(60);
      expect(results.filter((r) => r.status === 429)).to.have.length(40);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
