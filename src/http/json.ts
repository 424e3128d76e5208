// How every answer of the public API is written: JSON text with its Content-Type set on the
// response directly. Giving koa an object instead costs a MIME lookup when the body is set
// and a JSON.stringify plus a byte count when it is sent; answers built as text skip both.
// A large answer is debited to its workspace's byte budget here, once for every route
// (byte-budget.ts), less what the route paid for it before.
import type { Context } from 'koa';
import { debitAnswer, LARGE_BYTES } from './byte-budget.js';

/** The header koa's `ctx.type = 'application/json'` sets, without its MIME lookup per answer. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers with JSON text that is already serialized. */
export function sendJson(ctx: Context, text: string): void {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.body = text;
  // A UTF-8 character is at most 3 bytes a UTF-16 unit: shorter text is never large.
  if (text.length * 3 > LARGE_BYTES) debitAnswer(ctx, Buffer.byteLength(text));
}

/** Answers with JSON already encoded as UTF-8 bytes. */
export function sendJsonBytes(ctx: Context, bytes: Buffer): void {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.body = bytes;
  debitAnswer(ctx, bytes.length);
}

/** Answers with a value serialized as JSON. */
export function sendJsonValue(ctx: Context, value: unknown): void {
  sendJson(ctx, JSON.stringify(value));
}
