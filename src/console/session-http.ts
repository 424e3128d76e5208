// The console's HTTP side of sessions: /console/session (sign in, resume, sign out), the cookie,
// the same-origin checks, and the admin API's second way in (a console session instead of the
// bearer token), which runs the request under the console's actor name for the audit trail.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { actingAs } from '../admin/acting-as.js';
import type { AdminOperations } from '../admin/operations.js';
import { AppError, ErrorCode, forbidden, unauthorized } from '../errors.js';
import { jsonBody } from '../http/middleware/json-body.js';
import type { AppState } from '../http/state.js';
import { compile } from '../http/validate.js';
import { signInBody } from '../schemas/console.js';
import type { ConsoleSessionRecord } from '../store/installation/console-sessions.js';
import { sameToken, type ConsoleSessions } from './sessions.js';

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

async function liveSession(ctx: Context, sessions: ConsoleSessions): Promise<ConsoleSessionRecord> {
  const session = await sessions.resume(ctx.cookies.get(COOKIE));
  if (!session) {
    setCookie(ctx, '', 0);
    throw unauthorized('The console session has ended: sign in again');
  }
  setCookie(ctx, ctx.cookies.get(COOKIE)!, Math.round(sessions.config.sessionIdleMs / 1000));
  return session;
}

function assertCsrf(ctx: Context, session: ConsoleSessionRecord): void {
  assertSameOrigin(ctx);
  if (!sameToken(ctx.get(CSRF_HEADER), session.csrf)) {
    throw new AppError(ErrorCode.FORBIDDEN, 'Missing or wrong X-CSRF-Token: reload the console');
  }
}

function sessionAnswer(csrf: string, sessions: ConsoleSessions) {
  return { success: true, data: { csrfToken: csrf, idleSeconds: Math.round(sessions.config.sessionIdleMs / 1000), actor: CONSOLE_ACTOR } };
}

export function consoleSessionRouter(sessions: ConsoleSessions, ops: AdminOperations, maxBodyBytes: number): Router<AppState> {
  const router = new Router<AppState>({ sensitive: true });

  router.post('/console/session', jsonBody(maxBodyBytes), async (ctx) => {
    assertSameOrigin(ctx);
    const { token } = validateSignIn('body', ctx.request.body);
    const address = peer(ctx);
    const signedIn = await sessions.signIn(token, address);
    setCookie(ctx, signedIn.sessionId, Math.round(sessions.config.sessionIdleMs / 1000));
    await actingAs(CONSOLE_ACTOR, () => ops.audit('console.sign-in', 'console', { details: { address } }));
    ctx.body = sessionAnswer(signedIn.csrf, sessions);
  });

  // The page asks on load whether it is signed in, and takes the CSRF token from the answer.
  router.get('/console/session', async (ctx) => {
    const session = await liveSession(ctx, sessions);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = sessionAnswer(session.csrf, sessions);
  });

  router.delete('/console/session', async (ctx) => {
    const session = await liveSession(ctx, sessions);
    assertCsrf(ctx, session);
    await sessions.signOut(ctx.cookies.get(COOKIE)!);
    setCookie(ctx, '', 0);
    await actingAs(CONSOLE_ACTOR, () => ops.audit('console.sign-out', 'console', { details: { address: peer(ctx) } }));
    ctx.body = { success: true, data: { signedOut: true } };
  });

  return router;
}

export interface AdminSessionAuth {
  /** Whether this request means to use a console session rather than the bearer token. */
  claims(ctx: Context): boolean;
  readonly middleware: Middleware<AppState>;
}

/** The admin API's console way in: a live session, and for every write its CSRF token. */
export function consoleAdminAuth(sessions: ConsoleSessions): AdminSessionAuth {
  return {
    claims: (ctx) => !ctx.get('authorization') && ctx.cookies.get(COOKIE) !== undefined,
    middleware: async (ctx, next) => {
      const session = await liveSession(ctx, sessions);
      if (!SAFE_METHODS.has(ctx.method)) assertCsrf(ctx, session);
      await actingAs(CONSOLE_ACTOR, () => next() as Promise<void>);
    },
  };
}
