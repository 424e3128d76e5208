// The console's HTTP side of signing in: /console/session (sign in, resume, sign out; the route
// keeps its name), the cookie, the same-origin checks, and the admin API's second way in (a
// console sign-in instead of the bearer token), which runs the request under the console's
// actor name for the audit trail.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { actingAs } from '../admin/acting-as.js';
import type { AdminOperations } from '../admin/operations.js';
import { AppError, ErrorCode, forbidden, unauthorized } from '../errors.js';
import { jsonBody } from '../http/middleware/json-body.js';
import type { AppState } from '../http/state.js';
import { compile } from '../http/validate.js';
import { signInBody } from '../schemas/console.js';
import type { ConsoleSignInRecord } from '../store/installation/console-sign-ins.js';
import { sameToken, type ConsoleSignIns } from './sign-ins.js';

export const COOKIE = 'pds_console';
export const CSRF_HEADER = 'x-csrf-token';
/** The audit trail's name for everything done through the console. */
export const CONSOLE_ACTOR = 'console';

const validateSignIn = compile<{ token: string }>(signInBody);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** HTTPS directly, or through the operator's TLS proxy (which sets X-Forwarded-Proto). */
function overHttps(ctx: Context): boolean {
  return ctx.secure || ctx.get('x-forwarded-proto').split(',')[0]?.trim() === 'https';
}

function setCookie(ctx: Context, value: string, maxAgeSeconds: number): void {
  const parts = [`${COOKIE}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (overHttps(ctx)) parts.push('Secure');
  ctx.append('Set-Cookie', parts.join('; '));
}

/**
 * A browser names where a request comes from (Sec-Fetch-Site, Origin); anything but this page's
 * own origin is refused. Callers that send neither (curl, scripts) are not browsers, and a
 * forged cross-site request from a browser always carries at least one of them.
 */
function assertSameOrigin(ctx: Context): void {
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw forbidden('Cross-site request refused by the console');
  const origin = ctx.get('origin');
  if (origin && origin !== `${overHttps(ctx) ? 'https' : 'http'}://${ctx.host}`) {
    throw forbidden('Cross-site request refused by the console');
  }
}

/** Address of the peer: the ops listener is reached directly or through a proxy the operator runs. */
function peer(ctx: Context): string {
  return ctx.socket.remoteAddress ?? 'unknown';
}

async function liveSignIn(ctx: Context, signIns: ConsoleSignIns): Promise<ConsoleSignInRecord> {
  const signIn = await signIns.resume(ctx.cookies.get(COOKIE));
  if (!signIn) {
    setCookie(ctx, '', 0);
    throw unauthorized('The console session has ended: sign in again');
  }
  setCookie(ctx, ctx.cookies.get(COOKIE)!, Math.round(signIns.config.sessionIdleMs / 1000));
  return signIn;
}

function assertCsrf(ctx: Context, signIn: ConsoleSignInRecord): void {
  assertSameOrigin(ctx);
  if (!sameToken(ctx.get(CSRF_HEADER), signIn.csrf)) {
    throw new AppError(ErrorCode.FORBIDDEN, 'Missing or wrong X-CSRF-Token: reload the console');
  }
}

function signInAnswer(csrf: string, signIns: ConsoleSignIns) {
  return { success: true, data: { csrfToken: csrf, idleSeconds: Math.round(signIns.config.sessionIdleMs / 1000), actor: CONSOLE_ACTOR } };
}

export function consoleSignInRouter(signIns: ConsoleSignIns, ops: AdminOperations, maxBodyBytes: number): Router<AppState> {
  const router = new Router<AppState>({ sensitive: true });

  router.post('/console/session', jsonBody(maxBodyBytes), async (ctx) => {
    assertSameOrigin(ctx);
    const { token } = validateSignIn('body', ctx.request.body);
    const address = peer(ctx);
    const signedIn = await signIns.signIn(token, address);
    setCookie(ctx, signedIn.signInId, Math.round(signIns.config.sessionIdleMs / 1000));
    await actingAs(CONSOLE_ACTOR, () => ops.audit('console.sign-in', 'console', { details: { address } }));
    ctx.body = signInAnswer(signedIn.csrf, signIns);
  });

  // The page asks on load whether it is signed in, and takes the CSRF token from the answer.
  router.get('/console/session', async (ctx) => {
    const signIn = await liveSignIn(ctx, signIns);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = signInAnswer(signIn.csrf, signIns);
  });

  router.delete('/console/session', async (ctx) => {
    const signIn = await liveSignIn(ctx, signIns);
    assertCsrf(ctx, signIn);
    await signIns.signOut(ctx.cookies.get(COOKIE)!);
    setCookie(ctx, '', 0);
    await actingAs(CONSOLE_ACTOR, () => ops.audit('console.sign-out', 'console', { details: { address: peer(ctx) } }));
    ctx.body = { success: true, data: { signedOut: true } };
  });

  return router;
}

export interface AdminSignInAuth {
  /** Whether this request means to use a console sign-in rather than the bearer token. */
  claims(ctx: Context): boolean;
  readonly middleware: Middleware<AppState>;
}

/** The admin API's console way in: a live sign-in, and for every write its CSRF token. */
export function consoleAdminAuth(signIns: ConsoleSignIns): AdminSignInAuth {
  return {
    claims: (ctx) => !ctx.get('authorization') && ctx.cookies.get(COOKIE) !== undefined,
    middleware: async (ctx, next) => {
      const signIn = await liveSignIn(ctx, signIns);
      if (!SAFE_METHODS.has(ctx.method)) assertCsrf(ctx, signIn);
      await actingAs(CONSOLE_ACTOR, () => next() as Promise<void>);
    },
  };
}
