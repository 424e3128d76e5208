// What every write route hands to saves/player-writes.ts about its request: the workspace, the
// actor for the history, the request's clock reading, its Idempotency-Key with the path and body
// that fingerprint it, and its account with the workspace's byte budget (byte-budget.ts's
// requestBytes). Also sets the replay header on an answer that repeats a first one.
import type { Context } from 'koa';
import { idempotencyKeyOf, IDEMPOTENCY_HEADER, REPLAYED_HEADER } from '../saves/idempotency.js';
import type { WriteOrigin } from '../saves/player-writes.js';
import { requestBytes } from './byte-budget.js';
import type { AppState } from './state.js';

export function writeOrigin(ctx: Context & { state: AppState }, body: unknown): WriteOrigin {
  const principal = ctx.state.principal!;
  return {
    workspaceId: principal.workspace.id,
    plan: principal.workspace.plan,
    actor: `key:${principal.keyId}`,
    nowMs: ctx.state.startedAt,
    idempotencyKey: idempotencyKeyOf(ctx.req.headers[IDEMPOTENCY_HEADER]),
    path: ctx.path,
    body,
    bytes: requestBytes(ctx),
  };
}

export function markReplayed(ctx: Context, replayed: boolean): void {
  if (replayed) ctx.res.setHeader(REPLAYED_HEADER, 'true');
}
