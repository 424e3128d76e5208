// The admin HTTP API under /admin/v1, in the public API's envelope. It exists only when
// ADMIN_TOKEN is set; every request carries `Authorization: Bearer <ADMIN_TOKEN>`, compared in
// constant time, and wrong tokens are limited per address (ADMIN_AUTH_FAILURES). Each route file
// registers its routes on this router and calls AdminOperations, the same module the CLI uses.
import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.js';
import { banSubject, parseIp } from '../../domain/address.js';
import { AppError, ErrorCode, unauthorized } from '../../errors.js';
import { adminAuthFailures, type FailureCounter } from '../../store/installation/auth-failures.js';
import type { AppState } from '../../http/state.js';
import type { AdminOperations } from '../operations.js';
import { banAdminRoutes } from './routes/bans.js';
import { auditAdminRoutes } from './routes/audit.js';
import { keyAdminRoutes } from './routes/keys.js';
import { leaderboardAdminRoutes } from './routes/leaderboards.js';
import { overviewAdminRoutes } from './routes/overview.js';
import { playerAdminRoutes } from './routes/players.js';
import { transferAdminRoutes } from './routes/transfer.js';
import { erasureAdminRoutes } from './routes/erasures.js';
import { workspaceAdminRoutes } from './routes/workspaces.js';

export const ADMIN_PREFIX = '/admin/v1';

const ASK_FOR_TOKEN = 'Missing or invalid admin token: send Authorization: Bearer <ADMIN_TOKEN>';

/** Whom wrong tokens are counted against: the peer's address, an IPv6 one by its /64. */
function callerSubject(remoteAddress: string | undefined): string {
  const ip = parseIp(remoteAddress ?? '');
  return ip ? banSubject(ip) : 'unknown';
}

/**
 * Compares digests, so neither the length nor the content of the token leaks through timing.
 * A wrong token is counted and judged by the count it made, in one atomic step; a right one
 * passes only while its address has fewer than `max` failures. Each request is judged in the
 * order Redis sees it, so guesses sent at once cannot run past the limit (a right token among
 * them passes only if fewer than `max` wrong ones came first), and the operator's own requests
 * are never counted: they cost one read. A missing token is no guess: 401, not counted.
 */
export function bearerAuth(token: string, failures: FailureCounter, limit: { max: number; windowMs: number }): Middleware<AppState> {
  const expected = createHash('sha256').update(token).digest();
  return async function checkAdminToken(ctx, next) {
    const header = ctx.get('authorization');
    const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    if (!given) throw unauthorized(ASK_FOR_TOKEN);
    const right = timingSafeEqual(createHash('sha256').update(given).digest(), expected);
    const subject = callerSubject(ctx.socket.remoteAddress);
    const seen = right ? await failures.read(subject) : await failures.count(subject);
    if (right ? seen.count >= limit.max : seen.count > limit.max) {
      const seconds = Math.max(1, Math.ceil(seen.resetMs / 1000));
      throw new AppError(
        ErrorCode.RATE_LIMITED,
        `Too many wrong admin tokens from this address (ADMIN_AUTH_FAILURES: ${limit.max} in ${Math.round(limit.windowMs / 1000)} s): retry in ${seconds} s`,
        { headers: { 'Retry-After': String(seconds) } },
      );
    }
    if (!right) {
      const left = limit.max - seen.count;
      throw unauthorized(`${ASK_FOR_TOKEN} (${left} ${left === 1 ? 'try' : 'tries'} left before this address is paused)`);
    }
    await next();
  };
}

/** A second way in besides the bearer token: the operator console's sign-in (src/console/sign-in-http.ts). */
export interface AlternativeAuth {
  claims(ctx: Context): boolean;
  readonly middleware: Middleware<AppState>;
}

export function adminRouter(token: string, ops: AdminOperations, config: Config, alternative?: AlternativeAuth): Router<AppState> {
  // Case-sensitive: otherwise /ADMIN/v1/... matches the routes but skips the bearer check.
  const router = new Router<AppState>({ prefix: ADMIN_PREFIX, sensitive: true });
  const failures = adminAuthFailures(ops.redis, config.admin.authWindowMs);
  const bearer = bearerAuth(token, failures, { max: config.admin.authFailures, windowMs: config.admin.authWindowMs });
  router.use(alternative ? (ctx, next) => (alternative.claims(ctx) ? alternative.middleware(ctx, next) : bearer(ctx, next)) : bearer);
  workspaceAdminRoutes(router, ops, config);
  keyAdminRoutes(router, ops, config);
  banAdminRoutes(router, ops, config);
  playerAdminRoutes(router, ops, config);
  auditAdminRoutes(router, ops);
  transferAdminRoutes(router, ops);
  erasureAdminRoutes(router, ops, config);
  leaderboardAdminRoutes(router, ops, config);
  overviewAdminRoutes(router, ops);
  return router;
}
