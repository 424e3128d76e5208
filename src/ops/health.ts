// Liveness and readiness probes. /healthz: the process answers. /readyz: Redis answers, the
// scripts are loaded, and the service is not shutting down.
import type Router from '@koa/router';
import { ErrorCode, STORAGE_RETRY_AFTER_SECONDS, errorBody } from '../errors.js';
import type { AppState } from '../http/state.js';

export interface Readiness {
  /** Resolves with the reasons the service is not ready; an empty list means ready. */
  check(): Promise<string[]>;
}

export function healthRoutes(router: Router<AppState>, readiness: Readiness): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { success: true, status: 'alive' };
  });
  router.get('/readyz', async (ctx) => {
    const problems = await readiness.check();
    ctx.status = problems.length === 0 ? 200 : 503;
    if (problems.length > 0) ctx.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
    ctx.body =
      problems.length === 0
        ? { success: true, status: 'ready' }
        : errorBody(`Not ready: ${problems.join('; ')}`, ErrorCode.STORAGE_UNAVAILABLE);
  });
}
