// Counts and times every request by method, matched route and status, and counts 429s by
// plan. Unmatched paths share one route label, so scanners cannot grow the series count.
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { ServiceMetrics } from '../../metrics.js';
import type { TrafficStats } from '../../store/installation/traffic-stats.js';
import { routeOf } from '../route-of.js';
import type { AppState } from '../state.js';

/** `traffic`, when given, also counts each answer for the console's overview (the public API's only). */
export function observeRequests(metrics: ServiceMetrics, traffic?: TrafficStats): Middleware<AppState> {
  return async function observe(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(ctx) ?? 'unmatched';
      const seconds = (performance.now() - started) / 1000;
      metrics.observeRequest(ctx.method, route, ctx.status, seconds);
      traffic?.count(ctx.state.startedAt, ctx.status, seconds * 1000, ctx.state.principal?.workspace.id);
      if (ctx.status === 429 && ctx.state.principal) metrics.rateLimited.labels(ctx.state.principal.workspace.plan).inc();
    }
  };
}
