import { expect } from 'chai';
import { Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../src/hot-metrics.js';
import { ServiceMetrics } from '../../src/metrics.js';

function lines(text: string, prefix: string): string[] {
  return text.split('\n').filter((l) => l.startsWith(prefix));
}

describe('hot-path metrics', () => {
  it('a histogram puts a value equal to a bound in that bucket, and reports cumulative buckets, +Inf, sum and count', async () => {
    const registry = new Registry();
    const h = new HotHistogram('t_seconds', 'test', ['route'], [0.1, 1], registry);
    const series = h.series('/x');
    for (const v of [0.05, 0.1, 0.5, 1, 3]) series.observe(v);
    expect(lines(await registry.metrics(), 't_seconds')).to.deep.equal([
      't_seconds_bucket{route="/x",le="0.1"} 2',
      't_seconds_bucket{route="/x",le="1"} 4',
      't_seconds_bucket{route="/x",le="+Inf"} 5',
      't_seconds_sum{route="/x"} 4.65',
      't_seconds_count{route="/x"} 5',
    ]);
  });

  it('a counter keeps one series per label values, and the same series object for the same values', async () => {
    const registry = new Registry();
    const c = new HotCounter('t_total', 'test', ['method', 'status'], registry);
    c.series('GET', '200').inc();
    c.series('GET', '200').inc(2);
    c.series('POST', '400').inc();
    expect(c.series('GET', '200')).to.equal(c.series('GET', '200'));
    const text = await registry.metrics();
    expect(text).to.include('# TYPE t_total counter');
    expect(lines(text, 't_total')).to.deep.equal([
      't_total{method="GET",status="200"} 3',
      't_total{method="POST",status="400"} 1',
    ]);
  });

  it('reset zeroes the series that callers still hold', async () => {
    const registry = new Registry();
    const c = new HotCounter('r_total', 'test', ['k'], registry);
    const held = c.series('a');
    held.inc(5);
    registry.resetMetrics();
    held.inc();
    expect(lines(await registry.metrics(), 'r_total')).to.deep.equal(['r_total{k="a"} 1']);
  });

  it('labels every series, hot-path and prom-client ones alike, with the worker that counted it', async () => {
    const metrics = new ServiceMetrics();
    metrics.labelWorker('3');
    metrics.observeRequest('GET', '/api/v1/ping', 200, 0.001);
    metrics.rateLimited.inc({ plan: 'free' });
    const text = await metrics.registry.metrics();
    expect(lines(text, 'pds_http_requests_total{')).to.deep.equal([
      'pds_http_requests_total{method="GET",route="/api/v1/ping",status="200",worker="3"} 1',
    ]);
    expect(lines(text, 'pds_rate_limited_total{')).to.deep.equal(['pds_rate_limited_total{plan="free",worker="3"} 1']);
  });
});
