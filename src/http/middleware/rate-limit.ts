// Counts every authenticated request against its workspace's plan, sets the X-RateLimit-*
// headers on every answer, and refuses with 429 over the limit.
//
// Most verdicts are synchronous: the instance holds a lease on the window's budget, or knows
// the budget is spent (store/workspaces/rate-limiter.ts), and nothing waits on Redis. When a lease must be
// taken first, a read (GET/HEAD) runs alongside it instead of after it: both Redis commands
// leave in the same write, so a read costs one round trip. Reads change nothing, so when the
// verdict is "limited" the read's answer is simply thrown away and the 429 wins. Writes wait
// for the verdict before they start.
//
// The 429 is answered here rather than thrown: a refused request is the one a client repeats
// fastest, and building an Error (its stack trace) was most of its cost. The 429s decided in
// one turn of the event loop are sent together at its end (setImmediate): decided with no
// I/O, each would otherwise be written as soon as its request is read, one socket write and
// one wake-up of the client at a time, and the kernel's share of those writes was most of a
// 429's cost. A refused request waits at most for the rest of the turn.
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.js';
import { ErrorCode, errorBody, STATUS_OF } from '../../errors.js';
import type { RateLimiter, RateLimitResult } from '../../store/workspaces/rate-limiter.js';
import { sendJsonValue } from '../json.js';
import type { AppState } from '../state.js';

let endOfTurn: Promise<void> | undefined;

/** Resolves once the event loop has handled every request it read in this turn. */
function atEndOfTurn(): Promise<void> {
  return (endOfTurn ??= new Promise((resolve) => {
    setImmediate(() => {
      endOfTurn = undefined;
      resolve();
    });
  }));
}

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
    res.setHeader('Retry-After', resetSeconds);
    ctx.status = STATUS_OF[ErrorCode.RATE_LIMITED];
    sendJsonValue(
      ctx,
      errorBody(
        `Rate limit exceeded: the ${plan} plan allows ${result.limit} requests per ${windowSeconds} s; the window resets in ${resetSeconds} s`,
        ErrorCode.RATE_LIMITED,
      ),
    );
    return false;
  };

  const afterLease = async (ctx: Context & { state: AppState }, next: () => Promise<unknown>, verdict: Promise<RateLimitResult>) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      if (apply(ctx, await verdict)) await next();
      return;
    }
    const [limited, handled] = await Promise.allSettled([verdict, next()]);
    if (limited.status === 'rejected') throw limited.reason;
    if (!apply(ctx, limited.value)) return;
    if (handled.status === 'rejected') throw handled.reason;
  };

  return function limitRate(ctx, next) {
    const { workspace } = ctx.state.principal!;
    const verdict = limiter.hit(workspace.id, config.rateLimit.plans[workspace.plan], ctx.state.startedAt);
    if (verdict instanceof Promise) return afterLease(ctx, next, verdict);
    return apply(ctx, verdict) ? next() : atEndOfTurn();
  };
}
