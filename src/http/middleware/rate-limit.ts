// Counts every authenticated request against its workspace's plan (one Redis round trip),
// sets the X-RateLimit-* headers on every answer, and refuses with 429 over the limit.
import type { Middleware } from 'koa';
import type { Config } from '../../config.js';
import { AppError, ErrorCode } from '../../errors.js';
import type { RateLimiter } from '../../store/rate-limiter.js';
import type { AppState } from '../state.js';

export function rateLimit(limiter: RateLimiter, config: Pick<Config, 'rateLimit'>): Middleware<AppState> {
  const windowSeconds = config.rateLimit.windowMs / 1000;
  return async function limitRate(ctx, next) {
    const { workspace } = ctx.state.principal!;
    const limit = config.rateLimit.plans[workspace.plan];
    const result = await limiter.hit(workspace.id, limit, ctx.state.startedAt);
    ctx.state.rateLimit = result;
    const resetSeconds = String(Math.max(1, Math.ceil(result.resetMs / 1000)));
    const headers = {
      'X-RateLimit-Limit': String(result.limit),
      'X-RateLimit-Remaining': String(result.remaining),
      'X-RateLimit-Reset': resetSeconds,
    };
    if (!result.allowed) {
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        `Rate limit exceeded: the ${workspace.plan} plan allows ${limit} requests per ${windowSeconds} s; the window resets in ${resetSeconds} s`,
        { headers: { ...headers, 'Retry-After': resetSeconds } },
      );
    }
    ctx.set(headers);
    await next();
  };
}
