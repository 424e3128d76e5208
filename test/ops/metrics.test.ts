import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { metrics } from '../../src/metrics.js';
import type { RunningService } from '../../src/server.js';
import { instrumentRedis } from '../../src/store/redis/instrument.js';
import { call, client, newWorkspace, startTestService, testRedis } from '../support/service.js';

/** The value of one series in Prometheus text, 0 when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([^{\s]+)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((w) => present.includes(w))) return Number(match[3]);
  }
  return 0;
}

describe('GET /metrics on the ops listener', () => {
  let service: RunningService;
  let redis: Redis;
  const scrape = async () => {
    const res = await call({ baseUrl: service.opsUrl }, 'GET', '/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    return res.text;
  };

  before(async () => {
    service = await startTestService({ RATE_LIMIT_FREE: '2' });
    redis = testRedis();
  });
  after(async () => {
    await service.close();
    redis.disconnect();
  });

  it('counts and times requests by method, route and status', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const api = client(service, ws.apiKey);
    const ping = { method: 'GET', route: '/api/v1/ping', status: '200' };
    const before = await scrape();
    await api.get('/ping');
    await api.get('/ping');
    await api.get('/data?userId=nobody');
    await api.get('/no/such/path');
    await call(service, 'GET', '/ping', { key: 'pds_' + 'x'.repeat(40) });
    const after = await scrape();
    // Refused by the authentication middleware, still counted under the route it asked for.
    const refused = { method: 'GET', route: '/api/v1/ping', status: '401' };
    expect(sample(after, 'pds_http_requests_total', refused) - sample(before, 'pds_http_requests_total', refused)).to.equal(1);
    expect(after).not.to.include('(?:');
    expect(sample(after, 'pds_http_requests_total', ping) - sample(before, 'pds_http_requests_total', ping)).to.equal(2);
    const missing = { method: 'GET', route: '/api/v1/data', status: '404' };
    expect(sample(after, 'pds_http_requests_total', missing) - sample(before, 'pds_http_requests_total', missing)).to.equal(1);
    const unmatched = { route: 'unmatched', status: '404' };
    expect(sample(after, 'pds_http_requests_total', unmatched) - sample(before, 'pds_http_requests_total', unmatched)).to.equal(1);
    const timed = { method: 'GET', route: '/api/v1/ping' };
    const count = 'pds_http_request_duration_seconds_count';
    expect(sample(after, count, timed) - sample(before, count, timed)).to.equal(3);
    expect(sample(after, 'pds_http_request_duration_seconds_sum', timed)).to.be.greaterThan(0);
  });

  it('counts 429s by plan', async () => {
    const ws = await newWorkspace(redis, 'free');
    const api = client(service, ws.apiKey);
    const before = sample(await scrape(), 'pds_rate_limited_total', { plan: 'free' });
    for (let i = 0; i < 4; i++) await api.get('/ping');
    expect(sample(await scrape(), 'pds_rate_limited_total', { plan: 'free' }) - before).to.equal(2);
  });

  it('reports key-cache hits and misses', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const api = client(service, ws.apiKey);
    const before = await scrape();
    await api.get('/ping');
    await api.get('/ping');
    await api.get('/ping');
    const after = await scrape();
    expect(sample(after, 'pds_key_cache_misses_total') - sample(before, 'pds_key_cache_misses_total')).to.equal(1);
    expect(sample(after, 'pds_key_cache_hits_total') - sample(before, 'pds_key_cache_hits_total')).to.equal(2);
  });

  it('times Redis commands and counts their failures', async () => {
    const ws = await newWorkspace(redis, 'pro');
    const api = client(service, ws.apiKey);
    const count = 'pds_redis_command_duration_seconds_count';
    const before = await scrape();
    await api.post('/data/increment', { userId: 'p', key: 'coins' });
    const after = await scrape();
    // The rate limit and the increment are one script call each (EVAL the first time, EVALSHA after).
    const scripts = (text: string) => sample(text, count, { command: 'evalsha' }) + sample(text, count, { command: 'eval' });
    expect(scripts(after) - scripts(before)).to.equal(2);

    const probe = testRedis();
    try {
      instrumentRedis(probe, metrics);
      await probe.call('NOSUCHCOMMAND').catch(() => undefined);
    } finally {
      probe.disconnect();
    }
    const errors = await scrape();
    expect(sample(errors, 'pds_redis_command_errors_total', { command: 'nosuchcommand' })).to.equal(1);
  });

  it('exposes the default process metrics', async () => {
    const text = await scrape();
    expect(text).to.match(/^process_cpu_user_seconds_total \S+$/m);
    expect(text).to.match(/^nodejs_eventloop_lag_seconds \S+$/m);
  });

  it('reports the gate\'s refusals and violations, and keeps them once that service has stopped', async () => {
    // Enforce mode; a loopback caller is refused but never banned, so no ban is left behind.
    const gated = await startTestService({ GATE_MODE: 'enforce' });
    const ws = await newWorkspace(redis, 'pro');
    const counters = (text: string) => ({
      refusedViolation: sample(text, 'pds_gate_refusals_total', { reason: 'violation' }),
      userAgent: sample(text, 'pds_gate_violations_total', { reason: 'user-agent' }),
      robloxId: sample(text, 'pds_gate_violations_total', { reason: 'roblox-id' }),
      notBanned: sample(text, 'pds_gate_refused_not_banned_total'),
      bansCreated: sample(text, 'pds_gate_bans_created_total'),
    });
    let stopped = false;
    try {
      const before = counters(await scrape());
      const refused = await call(gated, 'GET', '/ping', { key: ws.apiKey, headers: { 'user-agent': 'curl/8.5.0' } });
      expect(refused.status).to.equal(403);
      const passed = await call(gated, 'GET', '/ping', { key: ws.apiKey, headers: { 'user-agent': 'Roblox/Linux', 'roblox-id': '1' } });
      expect(passed.status).to.equal(200);
      const after = counters(await scrape());
      expect(after.refusedViolation - before.refusedViolation).to.equal(1);
      expect(after.userAgent - before.userAgent).to.equal(1);
      expect(after.robloxId - before.robloxId).to.equal(1);
      expect(after.notBanned - before.notBanned).to.equal(1);
      expect(after.bansCreated - before.bansCreated).to.equal(0);
      // The service's own counters say the same, so the export neither drops nor doubles them.
      expect(gated.gate.counters.refusals.violation).to.equal(1);

      await gated.close();
      stopped = true;
      // Counters are totals: a stopped gate's counts stay in them.
      expect(counters(await scrape()).refusedViolation).to.equal(after.refusedViolation);
    } finally {
      if (!stopped) await gated.close();
    }
  });

  it('is not served on the public port', async () => {
    // Plain fetch: the response recorder would take this 404 for the ops listener's /metrics.
    const res = await fetch(service.baseUrl.replace(/\/api\/v1$/, '/metrics'));
    expect(res.status).to.equal(404);
    expect(await res.text()).not.to.include('pds_http_requests_total');
  });
});
