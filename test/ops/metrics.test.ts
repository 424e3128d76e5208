import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { metrics } from '../../src/metrics.js';
import type { RunningService } from '../../src/server.js';
import { instrumentRedis } from '../../src/store/instrument.js';
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

  it('exposes the gate refusal counter and the default process metrics', async () => {
    const before = sample(await scrape(), 'pds_gate_refusals_total', { reason: 'metrics-test' });
    metrics.gateRefusals.inc({ reason: 'metrics-test' });
    const text = await scrape();
    expect(sample(text, 'pds_gate_refusals_total', { reason: 'metrics-test' }) - before).to.equal(1);
    expect(text).to.match(/^process_cpu_user_seconds_total \S+$/m);
    expect(text).to.match(/^nodejs_eventloop_lag_seconds \S+$/m);
  });

  it('is not served on the public port', async () => {
    // Plain fetch: the response recorder would take this 404 for the ops listener's /metrics.
    const res = await fetch(service.baseUrl.replace(/\/api\/v1$/, '/metrics'));
    expect(res.status).to.equal(404);
    expect(await res.text()).not.to.include('pds_http_requests_total');
  });
});
