// Counts every authenticated request against its workspace's plan, sets the X-RateLimit-*
// headers on every answer, and refuses with 429 over the limit.
//
// A read (GET/HEAD) runs alongside the limiter instead of after it: both Redis commands leave
// in the same write, so a read costs one round trip. Reads change nothing, so when the verdict
// is "limited" the read's answer is simply thrown away and the 429 wins. Writes wait for the
// verdict before they start.
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.js';
import { AppError, ErrorCode } from '../../errors.js';
import type { RateLimiter, RateLimitResult } from '../../store/rate-limiter.js';
import type { AppState } from '../state.js';

export function rateLimit(limiter: RateLimiter, config: Pick<Config, 'rateLimit'>): Middleware<AppState> {
  const windowSeconds = config.rateLimit.windowMs / 1000;

  const apply = (ctx: Context & { state: AppState }, result: RateLimitResult): void => {
    ctx.state.rateLimit = result;
    const resetSeconds = String(Math.max(1, Math.ceil(result.resetMs / 1000)));
    if (!result.allowed) {
      const plan = ctx.state.principal!.workspace.plan;
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        `Rate limit exceeded: the ${plan} plan allows ${result.limit} requests per ${windowSeconds} s; the window resets in ${resetSeconds} s`,
        {
          headers: {
            'X-RateLimit-Limit': String(result.limit),
            'X-RateLimit-Remaining': '0',
            'X-RateLimit-Reset': resetSeconds,
            'Retry-After': resetSeconds,
          },
        },
      );
    }
    ctx.set('X-RateLimit-Limit', String(result.limit));
    ctx.set('X-RateLimit-Remaining', String(result.remaining));
    ctx.set('X-RateLimit-Reset', resetSeconds);
  };

  return async function limitRate(ctx, next) {
    const { workspace } = ctx.state.principal!;
    const verdict = limiter.hit(workspace.id, config.rateLimit.plans[workspace.plan], ctx.state.startedAt);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      apply(ctx, await verdict);
      return next();
    }
    const [limited, handled] = await Promise.allSettled([verdict, next()]);
    if (limited.status === 'rejected') throw limited.reason;
    apply(ctx, limited.value);
    if (handled.status === 'rejected') throw handled.reason;
  };
}
