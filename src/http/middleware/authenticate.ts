// Resolves `x-api-key` to a principal (401 otherwise), notes the key's use, and guards write
// endpoints by scope.
import type { Middleware } from 'koa';
import type { Authenticator } from '../../auth/authenticator.js';
import type { LastUsedRecorder } from '../../auth/last-used.js';
import { forbidden } from '../../errors.js';
import type { AppState } from '../state.js';

/** `lastUsed`, when given, notes each key's use in memory; it is flushed to Redis in batches. */
export function authenticate(authenticator: Authenticator, lastUsed?: LastUsedRecorder): Middleware<AppState> {
  return async function authenticateRequest(ctx, next) {
    const principal = await authenticator.authenticate(ctx.get('x-api-key') || undefined, ctx.state.startedAt);
    ctx.state.principal = principal;
    lastUsed?.touch(principal.keyId, principal.workspace.id, ctx.state.startedAt);
    await next();
  };
}

export const requireWriteScope: Middleware<AppState> = async function requireWriteScope(ctx, next) {
  if (ctx.state.principal?.scope !== 'write') {
    throw forbidden('This API key is read-only: it may ping and read, not change data');
  }
  await next();
};
