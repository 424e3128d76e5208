// Reads a JSON request body within the size limit, counting what it decodes to: plain, chunked
// or compressed (gzip, deflate, br), one reader charges it to the workspace's byte budget as it
// arrives (byte-budget.ts). A body in another media type is 415; a missing body is left
// undefined for the schema to reject with 400. Hand-written rather than co-body or raw-body:
// neither can count and refuse a body while it decodes, only once it is read whole.
// Only for its typing of ctx.request.body.
import type {} from '@koa/bodyparser';
import type { IncomingMessage } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Middleware, Next, ParameterizedContext } from 'koa';
import { AppError, ErrorCode } from '../../errors.js';
import { LARGE_BYTES } from '../byte-budget.js';
import type { AppState } from '../state.js';

/** The Content-Types clients send almost always; anything else goes through koa's type-is. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);
/** Strict JSON, as co-body's strict mode had it: the body must be an object or an array. */
const STRICT_JSON = /^[\x20\x09\x0a\x0d]*[[{]/;


/**
 * The declared Content-Length as a number, or NaN when it is not one. Not `~~`: that wraps a
 * length above 2^31 around (2^32 + 1 read as 1), and the body then never "ends".
 */
export function declaredLength(header: string): number {
  const text = header.trim();
  return /^\d{1,16}$/.test(text) ? Number(text) : NaN;
}

/** Shaped like raw-body's errors, so errors.ts answers them the same way. */
function httpError(status: number, message: string, type: string): Error {
  return Object.assign(new Error(message), { status, type, expose: true });
}

/** The body's JSON, parsed in strict mode; a 400 error when it is not JSON. */
function parseJson(body: Buffer): unknown {
  let text = body.toString('utf8');
  // iconv-lite, behind raw-body, dropped a leading byte order mark.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text === '') return {};
  try {
    if (!STRICT_JSON.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    return JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as Error, { status: 400, type: 'entity.parse.failed' });
  }
}

/**
 * The whole body, when it has arrived and waits unread in the request's buffer; undefined
 * otherwise. That is the usual case for a small body: it comes in the same packet as the
 * headers, and node's parser has pushed it by the time a microtask after the headers runs.
 * Taking it with one read() spares the listeners, the switch to flowing mode and the ticks
 * to 'end' that readJson needs. The declared length bounds what the parser delivers, so
 * holding that many bytes means holding all of them.
 */
function bufferedBody(req: IncomingMessage, length: number): Buffer | undefined {
  if (req.readableLength !== length || req.readableFlowing === true || req.destroyed) return undefined;
  const body: unknown = req.read();
  return Buffer.isBuffer(body) && body.length === length ? body : undefined;
}

/** What a body is charged while it is read: the byte budget's charge for its workspace, or nothing. */
type ChargeBytes = ((bytes: number) => void) | undefined;

const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: () => createGunzip(),
  deflate: () => createInflate(),
  br: () => createBrotliDecompress(),
};

/**
 * Reads a body, decoding it when it is compressed, within `limit` bytes of what it decodes to
 * (and of what arrives): 413 past it, 400 on an aborted or short body, on data the decoder
 * refuses and on anything that is not a JSON object or array. Every chunk is counted as it
 * decodes, and once the body passes LARGE_BYTES charged (`charge` may throw 429), so a
 * compressed or chunked body that passes the byte budget is cut off while it streams, never
 * read whole first. JSON.parse keeps a "__proto__" member as a plain own property. Resolves the
 * value and the bytes it decoded from.
 */
function readJson(
  req: IncomingMessage,
  options: { limit: number; length: number | null; encoding: string | undefined; charge: ChargeBytes },
): Promise<{ value: unknown; bytes: number }> {
  const { limit, length, encoding, charge } = options;
  if (length !== null && length > limit) {
    req.pause();
    return Promise.reject(httpError(413, 'request entity too large', 'entity.too.large'));
  }
  const decoder = encoding === undefined ? undefined : DECODERS[encoding]!();
  const source: Readable = decoder ?? req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let decoded = 0;
    let charged = 0;
    const finish = (err: Error | null, value?: { value: unknown; bytes: number }) => {
      req.removeListener('aborted', onAborted);
      req.removeListener('close', onClose);
      req.removeListener('error', onError);
      if (decoder) {
        req.removeListener('data', onRaw);
        req.unpipe(decoder);
        decoder.removeListener('error', onDecodeError);
        decoder.destroy();
      }
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      if (err) {
        req.pause();
        reject(err);
      } else {
        resolve(value!);
      }
    };
    const onAborted = () => finish(httpError(400, 'request aborted', 'request.aborted'));
    // raw-body waits forever when the stream closes without 'aborted' or 'end'; never hang.
    const onClose = () => {
      if (!req.complete) finish(httpError(400, 'request aborted', 'request.aborted'));
    };
    const onError = (err: Error) => finish(err);
    const onDecodeError = (err: Error) =>
      finish(new AppError(ErrorCode.INVALID_REQUEST, `Request body is not valid ${encoding} data`, { cause: err }));
    // A compressed body's own bytes are bounded too: what arrives may not exceed the limit either.
    const onRaw = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) finish(httpError(413, 'request entity too large', 'entity.too.large'));
    };
    const onData = (chunk: Buffer) => {
      decoded += chunk.length;
      if (!decoder) received = decoded;
      if (decoded > limit) return finish(httpError(413, 'request entity too large', 'entity.too.large'));
      if (charge !== undefined && decoded > LARGE_BYTES) {
        try {
          charge(decoded - charged);
        } catch (err) {
          return finish(err as Error);
        }
        charged = decoded;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (!decoder && length !== null && received !== length) {
        return finish(httpError(400, 'request size did not match content length', 'request.size.invalid'));
      }
      try {
        finish(null, { value: parseJson(Buffer.concat(chunks, decoded)), bytes: decoded });
      } catch (err) {
        finish(err as Error);
      }
    };
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.on('error', onError);
    if (decoder) {
      decoder.on('error', onDecodeError);
      req.on('data', onRaw);
      req.pipe(decoder);
    }
    source.on('data', onData);
    source.on('end', onEnd);
  });
}

export function jsonBody(maxBodyBytes: number): Middleware<AppState> {
  return async function readJsonBody(ctx, next) {
    const { headers } = ctx.req;
    const declared = headers['content-length'];
    // Checked before anything reads the length (koa's ctx.request.length wraps it with `~~` too).
    const length = declared === undefined ? null : declaredLength(declared);
    if (length !== null && !Number.isSafeInteger(length)) {
      throw new AppError(ErrorCode.INVALID_REQUEST, 'Content-Length must be a whole number of bytes');
    }
    if (length !== null && length > maxBodyBytes) {
      ctx.req.pause();
      throw new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body is larger than ${maxBodyBytes} bytes`);
    }
    const contentType = headers['content-type'];
    // type-is's own test for a body, which ctx.request.is() applies before the type.
    const bodyFollows = headers['transfer-encoding'] !== undefined || headers['content-length'] !== undefined;
    const isJson =
      ctx.request.length !== 0 &&
      ((bodyFollows && contentType !== undefined && PLAIN_JSON.has(contentType.toLowerCase())) ||
        Boolean(ctx.request.is('json')));
    if (!isJson) {
      const hasBody = Boolean(ctx.request.length) || ctx.get('transfer-encoding') !== '';
      if (hasBody) {
        throw new AppError(
          ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          `Request body must be JSON (Content-Type: application/json), got ${ctx.get('content-type') || 'no Content-Type'}`,
        );
      }
      return next();
    }
    const encoding = contentEncodingOf(headers['content-encoding']);
    if (encoding === undefined && length !== null && headers['transfer-encoding'] === undefined) {
      if (length > 0) {
        // Runs inside node's header callback, before the parser reads on: let it push the body.
        await undefined;
        const body = bufferedBody(ctx.req, length);
        if (body !== undefined) {
          ctx.request.body = parseJson(body);
          return handle(ctx, body.length, next);
        }
      }
    }
    ctx.state.bodyWaited = true;
    const budget = ctx.state.chargeBodyWhileRead ? ctx.state.byteBudget : undefined;
    const workspaceId = ctx.state.principal?.workspace.id;
    let bytes: number;
    try {
      ({ value: ctx.request.body, bytes } = await readJson(ctx.req, {
        limit: maxBodyBytes,
        length: headers['transfer-encoding'] === undefined ? length : null,
        encoding,
        charge: budget && workspaceId !== undefined ? (part) => budget.chargePart(workspaceId, part) : undefined,
      }));
    } catch (err) {
      // Refused before the body was all read: the rest is not worth reading, nor the socket keeping.
      if (!ctx.req.complete) ctx.res.setHeader('Connection', 'close');
      throw err;
    }
    await handle(ctx, bytes, next);
  };
}

/**
 * The request's work once its body is read: a body over LARGE_BYTES (whatever it arrived as:
 * plain, chunked or compressed) waits for the workspace's heavy turn on this instance
 * (byte-budget.ts), so that a neighbour waits behind one heavy request of the workspace.
 */
function handle(ctx: ParameterizedContext<AppState>, bytes: number, next: Next): Promise<void> {
  // A small body (nearly every request) goes straight on, with no promise of its own.
  const turn = bytes > LARGE_BYTES ? ctx.state.heavyTurn : undefined;
  return turn === undefined ? next() : turn().then(next);
}

/** The body's Content-Encoding: undefined for none, else a decoder's name; anything else is 415. */
function contentEncodingOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const name = header.trim().toLowerCase();
  if (name === 'identity' || name === '') return undefined;
  if (!Object.hasOwn(DECODERS, name)) {
    throw new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `Content-Encoding "${header.slice(0, 40)}" is not supported: send gzip, deflate, br or none`,
    );
  }
  return name;
}
