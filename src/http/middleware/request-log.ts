// Gives every request an id (the caller's X-Request-Id when it is sane, a new UUID otherwise),
// echoes it back, and writes one log line per request. The line never holds the API key.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { redactApiKeys } from '../../domain/api-key.js';
import type { Logger } from '../../logger.js';
import type { AppState } from '../state.js';

const REQUEST_ID = /^[\w.:/=+-]{1,128}$/;

export function requestLog(logger: Logger, now: () => number = Date.now): Middleware<AppState> {
  return async function logRequest(ctx, next) {
    const given = ctx.get('x-request-id');
    ctx.state.requestId = REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.startedAt = now();
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            requestId: ctx.state.requestId,
            method: ctx.method,
            route: (ctx as { _matchedRoute?: string })._matchedRoute ?? null,
            // A caller may put a key in the path by mistake; it must not reach the logs.
            path: redactApiKeys(ctx.path),
            status: ctx.status,
            ms: now() - ctx.state.startedAt,
            workspaceId: ctx.state.principal?.workspace.id,
            keyId: ctx.state.principal?.keyId,
          },
          'request',
        );
      }
    }
  };
}
