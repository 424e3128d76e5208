// Resolves `x-api-key` to a principal (401 otherwise), and guards write endpoints by scope.
import type { Middleware } from 'koa';
import type { Authenticator } from '../../auth/authenticator.js';
import { forbidden } from '../../errors.js';
import type { AppState } from '../state.js';

export function authenticate(authenticator: Authenticator): Middleware<AppState> {
  return async function authenticateRequest(ctx, next) {
    ctx.state.principal = await authenticator.authenticate(ctx.get('x-api-key') || undefined, ctx.state.startedAt);
    await next();
  };
}

export const requireWriteScope: Middleware<AppState> = async function requireWriteScope(ctx, next) {
  if (ctx.state.principal?.scope !== 'write') {
    throw forbidden('This API key is read-only: it may ping and read, not change data');
  }
  await next();
};
