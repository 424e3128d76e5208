// Counts and times every request by method, matched route and status, and counts 429s by
// plan. Unmatched paths share one route label, so scanners cannot grow the series count.
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { ServiceMetrics } from '../../metrics.js';
import { routeOf } from '../route-of.js';
import type { AppState } from '../state.js';

export function observeRequests(metrics: ServiceMetrics): Middleware<AppState> {
  return async function observe(ctx, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(ctx) ?? 'unmatched';
      metrics.observeRequest(ctx.method, route, ctx.status, (performance.now() - started) / 1000);
      if (ctx.status === 429 && ctx.state.principal) metrics.rateLimited.labels(ctx.state.principal.workspace.plan).inc();
    }
  };
}
