// The admin HTTP API under /admin/v1, in the public API's envelope. It exists only when
// ADMIN_TOKEN is set; every request carries `Authorization: Bearer <ADMIN_TOKEN>`, compared in
// constant time. Each route file registers its routes on this router and calls AdminOperations,
// the same module the CLI uses.
import { createHash, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.js';
import { unauthorized } from '../../errors.js';
import type { AppState } from '../../http/state.js';
import type { AdminOperations } from '../operations.js';
import { banAdminRoutes } from './routes/bans.js';
import { auditAdminRoutes } from './routes/audit.js';
import { keyAdminRoutes } from './routes/keys.js';
import { leaderboardAdminRoutes } from './routes/leaderboards.js';
import { playerAdminRoutes } from './routes/players.js';
import { transferAdminRoutes } from './routes/transfer.js';
import { workspaceAdminRoutes } from './routes/workspaces.js';

export const ADMIN_PREFIX = '/admin/v1';

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
export function bearerAuth(token: string): Middleware<AppState> {
  const expected = createHash('sha256').update(token).digest();
  return async function checkAdminToken(ctx, next) {
    const header = ctx.get('authorization');
    const given = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    const digest = createHash('sha256').update(given).digest();
    if (!given || !timingSafeEqual(digest, expected)) {
      throw unauthorized('Missing or invalid admin token: send Authorization: Bearer <ADMIN_TOKEN>');
    }
    await next();
  };
}

/** A second way in besides the bearer token: the operator console's session (src/console/). */
export interface AlternativeAuth {
  claims(ctx: Context): boolean;
  readonly middleware: Middleware<AppState>;
}

export function adminRouter(token: string, ops: AdminOperations, config: Config, alternative?: AlternativeAuth): Router<AppState> {
  // Case-sensitive: otherwise /ADMIN/v1/... matches the routes but skips the bearer check.
  const router = new Router<AppState>({ prefix: ADMIN_PREFIX, sensitive: true });
  const bearer = bearerAuth(token);
  router.use(alternative ? (ctx, next) => (alternative.claims(ctx) ? alternative.middleware(ctx, next) : bearer(ctx, next)) : bearer);
  workspaceAdminRoutes(router, ops, config);
  keyAdminRoutes(router, ops, config);
  banAdminRoutes(router, ops, config);
  playerAdminRoutes(router, ops, config);
  auditAdminRoutes(router, ops);
  transferAdminRoutes(router, ops);
  leaderboardAdminRoutes(router, ops, config);
  return router;
}
