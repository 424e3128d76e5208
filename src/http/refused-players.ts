// The answer of a many-player request (a batch, an acquire of many) whose players were refused
// or failed alone (past the byte budget, the workspace's writes queued past their turn, their
// Redis node failing): the longest of their Retry-After on the whole answer, for a client that
// sends them again.
import type { Context } from 'koa';
import { AppError } from '../errors.js';

export function retryAfterOfRefused(ctx: Context, outcomes: readonly unknown[]): void {
  let seconds = 0;
  for (const outcome of outcomes) {
    if (outcome instanceof AppError) seconds = Math.max(seconds, Number(outcome.headers['Retry-After'] ?? 0));
  }
  if (seconds > 0) ctx.set('Retry-After', String(seconds));
}
