// POST /api/v1/webhooks/roblox: the platform's webhook, on when ROBLOX_WEBHOOK_SECRET is set.
// Its caller is the platform's webhook service, not a game server: no API key, no plan and no
// gate (app.ts mounts it before them); the signature is its authentication. Order: the caller's
// budget of failed signatures (an attempt taken from it, or 429 before anything is read), the
// header and its timestamp, the body as sent (at most WEBHOOK_MAX_BODY_BYTES), the signature
// over it (a good one gives the attempt back), then the notification. A request that never
// proves its signature (a bad one, a body too large, cut off or too slow) stays counted.
// A valid erasure request is recorded (erasure/requests.ts) and answered at once; a worker
// erases in the background. Every refusal is logged with its reason, never with the body.
import Router from '@koa/router';
import type { Context } from 'koa';
import type { FailureBudget } from '../../auth/failure-budget.js';
import type { RobloxWebhookConfig } from '../../config.js';
import { normalizeGameId } from '../../domain/erasure.js';
import { judgeTimestamp, parseSignatureHeader, signatureMatches, SIGNATURE_HEADER } from '../../domain/roblox-signature.js';
import type { ErasureRequests } from '../../erasure/requests.js';
import { AppError, badRequest, ErrorCode, unauthorized } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { erasurePayload, robloxNotification } from '../../schemas/roblox-webhook.js';
import { readRawBody } from '../raw-body.js';
import type { AppState } from '../state.js';
import { compile } from '../validate.js';

/** A notification is a few hundred bytes; a request naming a studio's every game, a few KB. */
export const WEBHOOK_MAX_BODY_BYTES = 64 * 1024;
export const WEBHOOK_PATH = '/webhooks/roblox';

const validateNotification = compile<{ NotificationId: string; EventType: string; EventPayload?: unknown }>(robloxNotification);
const validatePayload = compile<{ UserId: number; GameIds: Array<number | string> }>(erasurePayload);

export interface WebhookDeps {
  readonly config: RobloxWebhookConfig & { readonly secret: string };
  readonly erasures: Pick<ErasureRequests, 'request'>;
  readonly logger: Logger;
  /** The caller's address key (an IPv6 /64), for the budget of failed signatures. */
  readonly callerOf: (ctx: Context) => string;
  readonly budget: FailureBudget;
}

export function robloxWebhookRouter(prefix: string, deps: WebhookDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix, sensitive: true });
  router.post(WEBHOOK_PATH, async (ctx) => {
    const now = Date.now();
    const caller = deps.callerOf(ctx);
    // Taken before the body is read, so that requests sent together cannot all pass it.
    const wait = deps.budget.take(caller, now);
    if (wait !== undefined) {
      throw new AppError(ErrorCode.RATE_LIMITED, `Too many webhook requests from this address without a valid signature (refused, or still being read): retry in ${wait} s`, {
        headers: { 'Retry-After': String(wait) },
      });
    }
    const refuse = (reason: string, message: string): never => {
      deps.logger.warn({ requestId: ctx.state.requestId, caller, reason }, 'roblox webhook refused');
      throw unauthorized(message);
    };
    const header = parseSignatureHeader(ctx.get(SIGNATURE_HEADER) || undefined);
    if (!header) refuse('signature-header', `Missing or malformed ${SIGNATURE_HEADER} header: expected t=<unix seconds>,v1=<base64 signature>`);
    const verdict = judgeTimestamp(header!.timestamp, now, deps.config.maxAgeSeconds);
    if (verdict === 'stale') refuse('stale', `The signature's timestamp is older than ${deps.config.maxAgeSeconds} s (ROBLOX_WEBHOOK_MAX_AGE_SECONDS)`);
    if (verdict === 'future') refuse('future', "The signature's timestamp is in the future");
    const body = await readRawBody(ctx.req, WEBHOOK_MAX_BODY_BYTES);
    if (!signatureMatches(deps.config.secret, header!, body)) {
      refuse('signature', 'The signature does not match the body: check that ROBLOX_WEBHOOK_SECRET is the secret set in the dashboard');
    }
    deps.budget.refund(caller, now);
    ctx.body = { success: true, data: await accept(deps, body, ctx.state.requestId) };
  });
  return router;
}

async function accept(deps: WebhookDeps, body: Buffer, requestId: string) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('Malformed JSON in request body');
  }
  const notification = validateNotification('body', parsed);
  const notificationId = notification.NotificationId;
  if (notification.EventType !== 'RightToErasureRequest') {
    deps.logger.info({ requestId, notificationId, eventType: notification.EventType }, 'roblox webhook: event ignored');
    return { notificationId, status: 'ignored' as const, jobId: null };
  }
  let payload: { UserId: number; GameIds: Array<number | string> };
  let gameIds: string[];
  try {
    payload = validatePayload('body', notification.EventPayload);
    gameIds = [...new Set(payload.GameIds.map((g, i) => {
      const id = normalizeGameId(g);
      if (id === undefined) throw badRequest(`Invalid field "GameIds[${i}]" in body: not an exact game id`);
      return id;
    }))];
  } catch (err) {
    // Signed, so the platform's: it retries a few times and then drops it, unrecorded. The
    // message names the field, never the user id.
    const refused = badRequest(`EventPayload: ${(err as Error).message}`);
    deps.logger.error({ requestId, notificationId, err: refused.message }, 'roblox webhook: a signed erasure request was refused as invalid');
    throw refused;
  }
  const recorded = await deps.erasures
    .request({ userId: String(payload.UserId), scope: { kind: 'games', gameIds }, source: 'webhook', actor: 'roblox-webhook', notificationId })
    .catch((err: unknown) => {
      // The platform retries a few times and then drops the request: an operator must hear of it now.
      if (err instanceof AppError && err.code === ErrorCode.ERASURE_NOT_CONFIGURED) {
        deps.logger.error({ requestId, notificationId, err: err.message }, 'roblox webhook: an erasure request could not be recorded');
      }
      throw err;
    });
  deps.logger.info({ requestId, notificationId, jobId: recorded.jobId, duplicate: !recorded.recorded }, 'roblox webhook: erasure request');
  return { notificationId, status: recorded.recorded ? ('accepted' as const) : ('duplicate' as const), jobId: recorded.jobId };
}
