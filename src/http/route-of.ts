// The route template a request matched (`/api/v1/data`, `/admin/v1/workspaces/:id`), for logs
// and metric labels. koa-router's ctx._matchedRoute is not enough: each router.use() layer
// overwrites it as it runs, so a request refused by authentication would be reported under
// the middleware's own pattern (`/api/v1(?:\/|$)`).
import type { Context } from 'koa';

interface MatchedLayer {
  readonly path: string;
  readonly methods: readonly string[];
}

/** The last route layer matching both path and method; null when none did (404, 405). */
export function routeOf(ctx: Context): string | null {
  const matched = (ctx as { matched?: readonly MatchedLayer[] }).matched;
  if (!matched) return null;
  for (let i = matched.length - 1; i >= 0; i--) {
    const layer = matched[i]!;
    if (layer.methods.length > 0 && layer.methods.includes(ctx.method)) return layer.path;
  }
  return null;
}
