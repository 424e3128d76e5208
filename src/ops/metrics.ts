// GET /metrics on the ops listener: the Prometheus text format of the service's registry.
import type Router from '@koa/router';
import type { Registry } from 'prom-client';
import type { AppState } from '../http/state.js';

export function metricsRoutes(router: Router<AppState>, registry: Registry): void {
  router.get('/metrics', async (ctx) => {
    const text = await registry.metrics();
    ctx.type = registry.contentType;
    ctx.body = text;
  });
}
