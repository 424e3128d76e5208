// Resolves `x-api-key` to a principal (401 otherwise), notes the key's use, and guards write
// endpoints by scope.
import type { Context, Middleware, Next } from 'koa';
import type { Authenticator, CallerOf, Principal } from '../../auth/authenticator.js';
import type { LastUsedRecorder } from '../../auth/last-used.js';
import { apiKeyOf } from '../../domain/api-key.js';
import { forbidden } from '../../errors.js';
import type { AppState } from '../state.js';

/**
 * `lastUsed`, when given, notes each key's use in memory; it is flushed to Redis in batches.
 * `callerOf`, when given, names the caller for the budget of failed keys per address.
 */
export function authenticate(
  authenticator: Authenticator,
  lastUsed?: LastUsedRecorder,
  callerOf?: (ctx: Context) => string,
): Middleware<AppState> {
  const admit = (ctx: Context & { state: AppState }, principal: Principal, next: Next) => {
    ctx.state.principal = principal;
    lastUsed?.touch(principal.keyId, principal.workspace.id, ctx.state.startedAt);
    return next();
  };
  // Not async: with the key cached the principal is known at once, and the request goes on
  // without a promise of its own. koa-compose turns a synchronous throw (401) into a rejection.
  return function authenticateRequest(ctx, next) {
    // Resolved already by the gate's checks (http/middleware/gate.ts), from the same header.
    if (ctx.state.principal) return admit(ctx, ctx.state.principal, next);
    const caller: CallerOf | undefined = callerOf && (() => callerOf(ctx));
    const principal = authenticator.authenticate(apiKeyOf(ctx.req.headers), ctx.state.startedAt, caller);
    if (principal instanceof Promise) return principal.then((found) => admit(ctx, found, next));
    return admit(ctx, principal, next);
  };
}

// Not async either: koa-compose turns the throw into a rejection.
export const requireWriteScope: Middleware<AppState> = function requireWriteScope(ctx, next) {
  if (ctx.state.principal?.scope !== 'write') {
    throw forbidden('This API key is read-only: it may ping and read, not change data');
  }
  return next();
};
