// Reads a JSON request body within the size limit. A body in another media type is 415; a
// missing body is left undefined for the schema to reject with 400.
// Only for its typing of ctx.request.body.
import type {} from '@koa/bodyparser';
import type { IncomingMessage } from 'node:http';
import coBody from 'co-body';
import type { Middleware } from 'koa';
import { AppError, ErrorCode } from '../../errors.js';
import type { AppState } from '../state.js';

/** The Content-Types clients send almost always; anything else goes through koa's type-is. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8']);
/** co-body's strict mode: the body must be an object or an array. */
const STRICT_JSON = /^[\x20\x09\x0a\x0d]*[[{]/;

/** What inflation (behind co-body) decodes; anything else is 415. */
const ENCODINGS = new Set(['gzip', 'deflate', 'br']);

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

/** The body's JSON, as co-body parsed it in strict mode; a 400 error when it is not JSON. */
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

/**
 * What co-body did for an uncompressed body, without its per-request cost (raw-body, the
 * iconv decoder, option cloning): Buffers up to the limit, then one utf-8 decode and
 * JSON.parse. Same outcomes: 413 on a declared or received length over the limit, 400 on an
 * aborted or short body and on anything that is not a JSON object or array. JSON.parse keeps
 * a "__proto__" member as a plain own property, as co-body with onProtoPoisoning 'ignore' did.
 */
function readJson(req: IncomingMessage, limit: number, length: number | null): Promise<unknown> {
  if (length !== null && length > limit) {
    req.pause();
    return Promise.reject(httpError(413, 'request entity too large', 'entity.too.large'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err: Error | null, value?: unknown) => {
      req.removeListener('aborted', onAborted);
      req.removeListener('close', onClose);
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      if (err) {
        req.pause();
        reject(err);
      } else {
        resolve(value);
      }
    };
    const onAborted = () => finish(httpError(400, 'request aborted', 'request.aborted'));
    // raw-body waits forever when the stream closes without 'aborted' or 'end'; never hang.
    const onClose = () => finish(httpError(400, 'request aborted', 'request.aborted'));
    const onError = (err: Error) => finish(err);
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return finish(httpError(413, 'request entity too large', 'entity.too.large'));
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (length !== null && received !== length) {
        return finish(httpError(400, 'request size did not match content length', 'request.size.invalid'));
      }
      try {
        finish(null, parseJson(Buffer.concat(chunks, received)));
      } catch (err) {
        finish(err as Error);
      }
    };
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

export function jsonBody(maxBodyBytes: number): Middleware<AppState> {
  // co-body rather than @koa/bodyparser for a compressed body, which does not pass
  // onProtoPoisoning on: its default refuses any body with a "__proto__" member, so a player
  // value holding that name could not be stored. Nothing here merges parsed objects, and the
  // schemas refuse unknown top-level fields.
  const options = { limit: maxBodyBytes, strict: true, encoding: 'utf-8', onProtoPoisoning: 'ignore' } as coBody.Options;
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
    const encoding = headers['content-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      ctx.state.bodyWaited = true;
      ctx.request.body = await readCompressed(ctx, options, encoding);
      return next();
    }
    if (length !== null && headers['transfer-encoding'] === undefined) {
      if (length > 0) {
        // Runs inside node's header callback, before the parser reads on: let it push the body.
        await undefined;
        const body = bufferedBody(ctx.req, length);
        if (body !== undefined) {
          ctx.request.body = parseJson(body);
          return next();
        }
      }
    }
    ctx.state.bodyWaited = true;
    ctx.request.body = await readJson(ctx.req, maxBodyBytes, headers['transfer-encoding'] === undefined ? length : null);
    await next();
  };
}

/**
 * A compressed body through co-body. An encoding it does not know is 415; a body that does
 * not decode (zlib's Z_DATA_ERROR, a truncated stream) is the caller's mistake, 400, where it
 * used to surface as a 500.
 */
async function readCompressed(ctx: Parameters<typeof coBody.json>[0], options: coBody.Options, encoding: string): Promise<unknown> {
  const name = encoding.trim().toLowerCase();
  if (!ENCODINGS.has(name)) {
    throw new AppError(
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      `Content-Encoding "${encoding.slice(0, 40)}" is not supported: send gzip, deflate, br or none`,
    );
  }
  try {
    return await coBody.json(ctx, options);
  } catch (err) {
    if (typeof (err as { status?: unknown }).status === 'number') throw err;
    throw new AppError(ErrorCode.INVALID_REQUEST, `Request body is not valid ${name} data`, { cause: err });
  }
}
