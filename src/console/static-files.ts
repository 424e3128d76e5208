// Serves the console's page, built by `npm run build` (console/build.ts) into dist/console-web/:
// index.html for every page URL under /console/ (the page routes itself), and the hashed
// assets under /console/assets/ with a year's caching, since a new build gets new names.
// Read from disk once, on the first request; the files are small (see docs/console.md).
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';
import { AppError, ErrorCode, notFound } from '../errors.js';
import type { AppState } from '../http/state.js';

/** The same folder from src/console/ (tsx) and from dist/console/ (compiled). */
export const CONSOLE_WEB_DIR = fileURLToPath(new URL('../../dist/console-web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Nothing but this service: no CDN, no inline script, not framed by another site. */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

interface Built {
  readonly index: Buffer;
  readonly assets: ReadonlyMap<string, Buffer>;
}

async function load(dir: string): Promise<Built | undefined> {
  try {
    const index = await readFile(join(dir, 'index.html'));
    const names = await readdir(join(dir, 'assets'));
    const assets = new Map<string, Buffer>();
    for (const name of names) assets.set(name, await readFile(join(dir, 'assets', name)));
    return { index, assets };
  } catch {
    return undefined;
  }
}

export function consolePages(dir = CONSOLE_WEB_DIR): Middleware<AppState> {
  let built: Promise<Built | undefined> | undefined;
  return async function serveConsole(ctx, next) {
    const path = ctx.path;
    if (path !== '/console' && !path.startsWith('/console/')) return next();
    if (path === '/console/session' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    if (path === '/console' || path === '/console/') {
      ctx.redirect('/console/overview');
      return;
    }
    built ??= load(dir);
    const files = await built;
    if (!files) {
      built = undefined;
      throw new AppError(ErrorCode.NOT_FOUND, 'The console is not built: run npm run build');
    }
    ctx.set(PAGE_HEADERS);
    if (path.startsWith('/console/assets/')) {
      const name = path.slice('/console/assets/'.length);
      const file = files.assets.get(name);
      if (!file) throw notFound(`No such console file: ${name}`);
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = TYPES[extname(name)] ?? 'application/octet-stream';
      ctx.body = file;
      return;
    }
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = TYPES['.html']!;
    ctx.body = files.index;
  };
}
