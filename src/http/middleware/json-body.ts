// Reads a JSON request body within the size limit. A body in another media type is 415; a
// missing body is left undefined for the schema to reject with 400.
// Only for its typing of ctx.request.body.
import type {} from '@koa/bodyparser';
import coBody from 'co-body';
import type { Middleware } from 'koa';
import { AppError, ErrorCode } from '../../errors.js';
import type { AppState } from '../state.js';

export function jsonBody(maxBodyBytes: number): Middleware<AppState> {
  // co-body directly rather than @koa/bodyparser, which does not pass onProtoPoisoning on: its
  // default refuses any body with a "__proto__" member, so a player value holding that name
  // could not be stored. JSON.parse makes such a member a plain own property; nothing here
  // merges parsed objects, and the schemas refuse unknown top-level fields.
  const options = { limit: maxBodyBytes, strict: true, encoding: 'utf-8', onProtoPoisoning: 'ignore' } as coBody.Options;
  const parse: Middleware<AppState> = async (ctx, next) => {
    ctx.request.body = await coBody.json(ctx, options);
    await next();
  };
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
