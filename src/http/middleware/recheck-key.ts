// Checks the request's API key once more when its body has arrived, just before a write is
// applied: a key revoked while a slow body was still arriving (up to HTTP_REQUEST_TIMEOUT_MS)
// must not let that write land. The revocation's invalidation has dropped the key from every
// instance's cache by then, so the check reads the key's record again; otherwise it is a cache
// hit, with no Redis call. A body that came with the headers (nearly every write) waited for
// nothing, and is not checked twice: hashing the key again cost a write about 2 µs.
import type { Middleware } from 'koa';
import type { Authenticator } from '../../auth/authenticator.js';
import { apiKeyOf } from '../../domain/api-key.js';
import type { AppState } from '../state.js';

export function recheckKey(authenticator: Authenticator): Middleware<AppState> {
  return function recheckKeyAfterBody(ctx, next) {
    if (ctx.state.bodyWaited !== true) return next();
    const principal = authenticator.authenticate(apiKeyOf(ctx.req.headers), Date.now());
    if (principal instanceof Promise) return principal.then(() => next());
    return next();
  };
}
