// Reads a JSON request body within the size limit. A body in another media type is 415; a
// missing body is left undefined for the schema to reject with 400.
import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { AppError, ErrorCode } from '../../errors.js';
import type { AppState } from '../state.js';

export function jsonBody(maxBodyBytes: number): Middleware<AppState> {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: maxBodyBytes,
    jsonStrict: true,
    encoding: 'utf-8',
    onError: (err) => {
      throw err;
    },
  }) as unknown as Middleware<AppState>;
  return async function readJsonBody(ctx, next) {
    if (ctx.request.length === 0 || !ctx.request.is('json')) {
      const hasBody = Boolean(ctx.request.length) || ctx.get('transfer-encoding') !== '';
      if (hasBody) {
        throw new AppError(
          ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          `Request body must be JSON (Content-Type: application/json), got ${ctx.get('content-type') || 'no Content-Type'}`,
        );
      }
      return next();
    }
    return parse(ctx, next);
  };
}
