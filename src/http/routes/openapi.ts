// GET /api/v1/openapi.json: the OpenAPI document, mounted before authentication so that
// tools can read it without an API key.
import Router from '@koa/router';
import { openApiJson } from '../../openapi/document.js';
import type { AppState } from '../state.js';

export function openApiRouter(prefix: string): Router<AppState> {
  const router = new Router<AppState>({ prefix });
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApiJson();
  });
  return router;
}
