// Gives every request an id (the caller's X-Request-Id when it is of a safe shape, a new UUID
// otherwise), echoes it back, and writes one log line per request. The line never holds the API
// key: an id holding anything shaped like one (a caller who pasted the key in the wrong header)
// is replaced like any other unsafe id, so it is neither logged nor sent back.
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import { holdsApiKey, redactApiKeys } from '../../domain/api-key.js';
import type { Logger } from '../../logger.js';
import { refusalCounts } from '../refused-players.js';
import { routeOf } from '../route-of.js';
import type { AppState } from '../state.js';

/** Printable, no spaces or quotes, at most 128 characters: safe in a log line and a header. */
const REQUEST_ID = /^[\w.:/=+-]{1,128}$/;

function requestIdOf(given: string | string[] | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) && !holdsApiKey(given) ? given : randomUUID();
}

export interface RequestLogOptions {
  /** Routes whose successes are logged at debug rather than info: probes and scrapes. */
  readonly quietRoutes?: ReadonlySet<string>;
}

export function requestLog(
  logger: Logger,
  now: () => number = Date.now,
  options: RequestLogOptions = {},
): Middleware<AppState> {
  const quiet = options.quietRoutes ?? new Set<string>();
  return async function logRequest(ctx, next) {
    // The raw header rather than ctx.get(), which lower-cases the name on every call.
    const given = ctx.req.headers['x-request-id'];
    ctx.state.requestId = requestIdOf(given);
    ctx.state.startedAt = now();
    ctx.res.setHeader('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      const route = routeOf(ctx);
      const level = ctx.status < 400 && route !== null && quiet.has(route) ? 'debug' : 'info';
      if (logger.isLevelEnabled(level)) {
        logger[level](
          {
            requestId: ctx.state.requestId,
            method: ctx.method,
            route,
            // A caller may put a key in the path by mistake; it must not reach the logs.
            path: redactApiKeys(ctx.path),
            status: ctx.status,
            ms: now() - ctx.state.startedAt,
            workspaceId: ctx.state.principal?.workspace.id,
            keyId: ctx.state.principal?.keyId,
            // A many-player request's players that failed alone in its 200, by status and code.
            playersRefused: refusalCounts(ctx.state.playersRefused),
          },
          'request',
        );
      }
    }
  };
}
