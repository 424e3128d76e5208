// GET /api/v1/openapi.json: the public API's OpenAPI document (the admin API's is on the ops
// listener), mounted before authentication so that tools can read it without an API key.
import Router from '@koa/router';
import type { Middleware } from 'koa';
import { openApiJson } from '../../openapi/document.js';
import type { AppState } from '../state.js';

const FILE = '/openapi.json';
/** Any path the route can match holds its file name (the router matches case-insensitively). */
const MAY_MATCH = /\/openapi\.json/i;

export function openApiRouter(prefix: string): Router<AppState> {
  const router = new Router<AppState>({ prefix });
  router.get(FILE, (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson('public');
  });
  return router;
}

/**
 * The router's middleware, entered only by paths it may match: a router dispatch that matches
 * nothing still parses the Host header and runs its matcher, on every API request.
 */
export function openApiRoutes(prefix: string): Middleware<AppState> {
  // The same middleware app.use() takes; its type asks for the router's own context fields.
  const router = openApiRouter(prefix);
  const routes = router.routes() as unknown as Middleware<AppState>;
  const guarded: Middleware<AppState> = (ctx, next) => (MAY_MATCH.test(ctx.path) ? routes(ctx, next) : next());
  // Where koa-router's own middleware keeps it: route listings (the OpenAPI check) read it.
  return Object.assign(guarded, { router });
}
