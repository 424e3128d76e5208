// The ops listener's own routes (ADMIN_PORT): probes and metrics, open to whoever can reach it.
import { aliveResponse, metricsResponse, openApiResponse, readyResponse } from '../../schemas/responses.js';
import { consoleSessionResponse, signedOutResponse, signInBody } from '../../schemas/console.js';
import { openRoute, type RouteSpec } from '../route-spec.js';

export const opsRoutes: readonly RouteSpec[] = [
  openRoute('get', '/healthz', 'Liveness: the process answers', 'ops', { ok: aliveResponse }),
  openRoute('get', '/readyz', 'Readiness: this instance can serve (not draining, at least one Redis master answers)', 'ops', {
    ok: readyResponse,
    errors: [503],
    errorText: {
      503: 'Not ready: draining after SIGTERM (SHUTDOWN_DRAIN_MS), or no Redis master answers; the message lists the reasons. One master of a cluster failing over is 200 `degraded`, not 503.',
    },
  }),
  // The operator console's session (only with ADMIN_TOKEN); docs/console.md. The page itself
  // (GET /console/...) is static files, not an API.
  openRoute('post', '/console/session', 'Console sign-in: the admin token for a session cookie and a CSRF token', 'console', {
    body: signInBody,
    ok: consoleSessionResponse,
    errors: [400, 401, 403, 413, 415, 429],
    errorText: {
      401: 'Wrong admin token.',
      403: 'A cross-site request (Origin or Sec-Fetch-Site of another site).',
      429: 'Too many wrong tokens from this address; retry after Retry-After seconds.',
    },
  }),
  openRoute('get', '/console/session', 'The console session of the cookie, and its CSRF token', 'console', {
    ok: consoleSessionResponse,
    errors: [401],
    errorText: { 401: 'No session, or it has ended.' },
  }),
  openRoute('delete', '/console/session', 'Console sign-out (needs X-CSRF-Token)', 'console', {
    ok: signedOutResponse,
    errors: [401, 403],
    errorText: { 401: 'No session, or it has ended.', 403: 'Missing or wrong X-CSRF-Token, or a cross-site request.' },
  }),
  openRoute('get', '/openapi.json', "The ops listener's OpenAPI document: the admin API, the probes and the metrics", 'meta', {
    ok: openApiResponse,
  }),
  openRoute('get', '/metrics', 'Prometheus metrics', 'ops', {
    ok: metricsResponse,
    contentType: 'text/plain',
  }),
];
