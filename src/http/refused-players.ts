// The answer of a many-player request (a batch, an acquire of many) whose players were refused
// or failed alone (past the byte budget, the workspace's writes queued past their turn, their
// Redis node failing): the longest of their Retry-After on the whole answer, for a client that
// sends them again; and the refusals left on ctx.state, so that the request answered 200 still
// logs and counts them (the request log's `playersRefused`, the failover log for the 5xx).
import type { Context } from 'koa';
import { AppError } from '../errors.js';
import type { PlayerRefusal } from './state.js';

export function retryAfterOfRefused(ctx: Context, outcomes: readonly unknown[]): void {
  let seconds = 0;
  const refused: PlayerRefusal[] = [];
  for (const outcome of outcomes) {
    if (!(outcome instanceof AppError)) continue;
    seconds = Math.max(seconds, Number(outcome.headers['Retry-After'] ?? 0));
    refused.push({ status: outcome.status, code: outcome.code, cause: outcome.cause });
  }
  if (seconds > 0) ctx.set('Retry-After', String(seconds));
  if (refused.length > 0) (ctx.state as { playersRefused?: readonly PlayerRefusal[] }).playersRefused = refused;
}

/** The refusals by `status code` ("503 STORAGE_UNAVAILABLE": 3), for the request's log line. */
export function refusalCounts(refused: readonly PlayerRefusal[] | undefined): Record<string, number> | undefined {
  if (!refused?.length) return undefined;
  const counts: Record<string, number> = {};
  for (const r of refused) counts[`${r.status} ${r.code}`] = (counts[`${r.status} ${r.code}`] ?? 0) + 1;
  return counts;
}
