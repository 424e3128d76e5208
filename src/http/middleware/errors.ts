// Outermost handler: every failure below becomes a status and the standard error envelope.
// 4xx messages are shown; 5xx messages are replaced (and logged) so no internals leak.
import type { Middleware } from 'koa';
import { redactApiKeys } from '../../domain/api-key.js';
import { AppError, ErrorCode, errorBodyOf, storageUnavailable } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { failoverLogOf, redisFailureKind } from '../../store/redis/failover-log.js';
import { isUnavailableError } from '../../store/redis/redis.js';
import { sendJsonValue } from '../json.js';
import type { AppState } from '../state.js';

/** Errors thrown by koa, the router and the body parser carry an HTTP status. */
function fromHttpError(err: { status: number; message: string; type?: string }, maxBodyBytes: number): AppError {
  switch (err.status) {
    case 413:
      return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body is larger than ${maxBodyBytes} bytes`);
    case 415:
      return new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Request body must be JSON (Content-Type: application/json; charset=utf-8)');
    case 405:
      return new AppError(ErrorCode.METHOD_NOT_ALLOWED, err.message);
    case 404:
      return new AppError(ErrorCode.NOT_FOUND, err.message);
    default:
      if (err.type === 'entity.parse.failed' || /JSON|Unexpected|token/i.test(err.message)) {
        return new AppError(ErrorCode.INVALID_REQUEST, 'Malformed JSON in request body');
      }
      if (err.type === 'request.aborted') {
        return new AppError(ErrorCode.INVALID_REQUEST, 'Request body was not received completely');
      }
      return new AppError(ErrorCode.INVALID_REQUEST, 'Bad request');
  }
}

export function toAppError(err: unknown, maxBodyBytes: number): AppError {
  if (err instanceof AppError) return err;
  if (isUnavailableError(err)) return storageUnavailable(err);
  const status = (err as { status?: unknown } | null)?.status;
  // The router answers a method it does not know at all (PROPFIND, ...) with 501; to the
  // caller that is the same mistake as any other method the endpoint does not take.
  if (status === 501) return new AppError(ErrorCode.METHOD_NOT_ALLOWED, 'Method not allowed');
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return fromHttpError(err as { status: number; message: string; type?: string }, maxBodyBytes);
  }
  return new AppError(ErrorCode.INTERNAL, 'Internal server error', { cause: err });
}

/**
 * The players of a many-player request answered 200 that failed for storage (5xx each: their
 * node failing over, a write turn the node never gave): counted and logged as the request's own
 * 5xx would be, through the failover log (a line per kind a second); a bug (500) at error.
 */
function notePlayersFailed(logger: Logger, state: AppState): void {
  const failed = state.playersRefused?.filter((r) => r.status >= 500);
  if (!failed?.length) return;
  const bug = failed.find((r) => r.code === ErrorCode.INTERNAL);
  if (bug) logger.error({ err: bug.cause, requestId: state.requestId, players: failed.length }, 'a player of a many-player request failed: internal error');
  const first = failed.find((r) => redisFailureKind(r.cause) !== undefined) ?? failed.find((r) => r !== bug);
  if (!first) return;
  failoverLogOf(logger).record(
    redisFailureKind(first.cause) ?? 'unavailable',
    first.cause ?? first.code,
    { requestId: state.requestId, players: failed.length, status: first.status, code: first.code },
    `players of a many-player request answered ${first.status} alone`,
  );
}

export function errorHandler(logger: Logger, maxBodyBytes: number): Middleware<AppState> {
  return async function handleErrors(ctx, next) {
    try {
      await next();
      notePlayersFailed(logger, ctx.state);
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(ErrorCode.NOT_FOUND, `No such endpoint: ${ctx.method} ${redactApiKeys(ctx.path)}`);
      }
      // The routers' allowedMethods() set 405 (501 for a method no router knows) and the Allow
      // header that HTTP requires with it, and leave the body to us.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) {
        const allow = ctx.response.get('Allow');
        throw new AppError(
          ErrorCode.METHOD_NOT_ALLOWED,
          allow ? `Method ${ctx.method} is not allowed here; this endpoint takes ${allow}` : `Method ${ctx.method} is not allowed here`,
          { headers: { Allow: allow } },
        );
      }
    } catch (err) {
      const appError = toAppError(err, maxBodyBytes);
      if (appError.status >= 500) {
        const cause = err instanceof AppError ? (err.cause ?? err) : err;
        // Redis unavailable (a failover, a restart) answers 503 and needs no one: counted and
        // logged at warn, a line a second at most (store/redis/failover-log.ts). A 500 is a bug.
        const kind = redisFailureKind(cause) ?? (appError.status === 503 ? 'unavailable' : undefined);
        if (kind !== undefined) {
          failoverLogOf(logger).record(kind, cause, { requestId: ctx.state.requestId, status: appError.status, code: appError.code }, `a request answered ${appError.status}`);
        } else {
          logger.error({ err: cause, requestId: ctx.state.requestId, status: appError.status }, appError.message);
        }
      }
      ctx.set(appError.headers);
      ctx.status = appError.status;
      sendJsonValue(ctx, errorBodyOf(appError));
    }
  };
}
