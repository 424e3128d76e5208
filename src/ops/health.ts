// Liveness and readiness probes (docs/operations.md#probes-kubernetes-and-load-balancers).
// /healthz: the process answers. /readyz: this instance can serve: it is not draining and at
// least one Redis master answers it. A master that does not answer while others do (one of a
// cluster's masters failing over) is reported in the body with 200, not 503: every instance sees
// the same master fail, so a 503 there took every healthy instance out of the balancer at once
// (issue 40), while each instance still served every player whose master answers.
import type Router from '@koa/router';
import { ErrorCode, STORAGE_RETRY_AFTER_SECONDS, errorBody } from '../errors.js';
import type { AppState } from '../http/state.js';
import { redisReach, type RedisReach } from '../store/redis/reachability.js';
import type { RedisClient } from '../store/redis/redis.js';

export interface ReadinessReport {
  /** Why this instance cannot serve; empty when it can. */
  readonly problems: readonly string[];
  readonly redis: RedisReach;
}

export interface Readiness {
  check(): Promise<ReadinessReport>;
}

/** The service's readiness: `draining` is true from SIGTERM on (server.ts drain()). */
export function serviceReadiness(redis: RedisClient, draining: () => boolean): Readiness {
  return {
    async check() {
      const reach = await redisReach(redis);
      const problems: string[] = [];
      if (draining()) problems.push('shutting down (draining)');
      if (reach.answering.length === 0) {
        problems.push(reach.masters > 1 ? `Redis does not answer (none of ${reach.masters} masters)` : 'Redis does not answer');
      }
      return { problems, redis: reach };
    },
  };
}

export function healthRoutes(router: Router<AppState>, readiness: Readiness): void {
  router.get('/healthz', (ctx) => {
    ctx.body = { success: true, status: 'alive' };
  });
  router.get('/readyz', async (ctx) => {
    const { problems, redis } = await readiness.check();
    if (problems.length > 0) {
      ctx.status = 503;
      ctx.set('Retry-After', String(STORAGE_RETRY_AFTER_SECONDS));
      ctx.body = errorBody(`Not ready: ${problems.join('; ')}`, ErrorCode.STORAGE_UNAVAILABLE);
      return;
    }
    ctx.body = {
      success: true,
      status: redis.notAnswering.length === 0 ? 'ready' : 'degraded',
      redis: { masters: redis.masters, answering: redis.answering.length, notAnswering: redis.notAnswering },
    };
  });
}
