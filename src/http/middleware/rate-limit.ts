// Counts every authenticated request against its workspace's plan, sets the X-RateLimit-*
// headers on every answer, and refuses with 429 over the limit.
//
// A read (GET/HEAD) runs alongside the limiter instead of after it: both Redis commands leave
// in the same write, so a read costs one round trip. Reads change nothing, so when the verdict
// is "limited" the read's answer is simply thrown away and the 429 wins. Writes wait for the
// verdict before they start. A workspace known to be over its limit until its window resets
// (store/limit-hints.ts) is refused before anything else runs: no Redis command, no handler.
//
// The 429 is answered here rather than thrown: a refused request is the one a client repeats
// fastest, and building an Error (its stack trace) was most of its cost.
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.js';
import { ErrorCode, errorBody, STATUS_OF } from '../../errors.js';
import type { RateLimiter, RateLimitResult } from '../../store/rate-limiter.js';
import type { AppState } from '../state.js';

export function rateLimit(limiter: RateLimiter, config: Pick<Config, 'rateLimit'>): Middleware<AppState> {
  const windowSeconds = config.rateLimit.windowMs / 1000;

  /** Sets the headers; answers 429 and returns false when the request is refused. */
  const apply = (ctx: Context & { state: AppState }, result: RateLimitResult): boolean => {
    ctx.state.rateLimit = result;
    const resetSeconds = String(Math.max(1, Math.ceil(result.resetMs / 1000)));
    // On the response itself: koa's ctx.set (delegate, type checks) showed in the profile.
    const res = ctx.res;
    res.setHeader('X-RateLimit-Limit', String(result.limit));
    res.setHeader('X-RateLimit-Remaining', String(result.remaining));
    res.setHeader('X-RateLimit-Reset', resetSeconds);
    if (result.allowed) return true;
    const plan = ctx.state.principal!.workspace.plan;
    ctx.set('Retry-After', resetSeconds);
    ctx.status = STATUS_OF[ErrorCode.RATE_LIMITED];
    ctx.body = errorBody(
      `Rate limit exceeded: the ${plan} plan allows ${result.limit} requests per ${windowSeconds} s; the window resets in ${resetSeconds} s`,
    );
    return false;
  };

  return async function limitRate(ctx, next) {
    const { workspace } = ctx.state.principal!;
    const limit = config.rateLimit.plans[workspace.plan];
    const refused = limiter.refuseLocally(workspace.id, limit, ctx.state.startedAt);
    if (refused) {
      apply(ctx, refused);
      return;
    }
    const verdict = limiter.hit(workspace.id, limit, ctx.state.startedAt);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      if (apply(ctx, await verdict)) await next();
      return;
    }
    const [limited, handled] = await Promise.allSettled([verdict, next()]);
    if (limited.status === 'rejected') throw limited.reason;
    if (!apply(ctx, limited.value)) return;
    if (handled.status === 'rejected') throw handled.reason;
  };
}
