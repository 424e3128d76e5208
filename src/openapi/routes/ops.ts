// The ops listener's own routes (ADMIN_PORT): probes and metrics, open to whoever can reach it.
import { aliveResponse, metricsResponse, readyResponse } from '../../schemas/responses.js';
import { openRoute, type RouteSpec } from '../route-spec.js';

export const opsRoutes: readonly RouteSpec[] = [
  openRoute('get', '/healthz', 'Liveness: the process answers', 'ops', { ok: aliveResponse }),
  openRoute('get', '/readyz', 'Readiness: Redis answers, the scripts are loaded, not shutting down', 'ops', {
    ok: readyResponse,
    errors: [503],
    errorText: { 503: 'Not ready; the message lists the reasons.' },
  }),
  openRoute('get', '/metrics', 'Prometheus metrics', 'ops', {
    ok: metricsResponse,
    contentType: 'text/plain',
  }),
];
