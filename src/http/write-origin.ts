// What every write route hands to saves/player-writes.ts about its request: the workspace, the
// actor for the history, the request's clock reading, and its Idempotency-Key with the path and
// body that fingerprint it, and how the bytes its script copies inside Redis and the messages its
// answer hands over are charged. Also sets the replay header on an answer that repeats a first one.
import type { Context } from 'koa';
import { idempotencyKeyOf, IDEMPOTENCY_HEADER, REPLAYED_HEADER } from '../saves/idempotency.js';
import type { WriteOrigin } from '../saves/player-writes.js';
import { debitRead, debitWork } from './byte-budget.js';
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
    chargeWork: (bytes) => debitWork(ctx, bytes),
    chargeAnswer: (bytes) => debitRead(ctx, bytes),
    refuseInDebt: () => ctx.state.byteBudget?.refuseInDebt(principal.workspace.id),
  };
}

export function markReplayed(ctx: Context, replayed: boolean): void {
  if (replayed) ctx.res.setHeader(REPLAYED_HEADER, 'true');
}
