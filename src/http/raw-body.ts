// Reads a request body as the bytes sent, within a limit: for a body whose signature covers
// those exact bytes (the platform's webhook), which a parse and a re-serialisation would not
// reproduce.
import type { IncomingMessage } from 'node:http';
import { AppError, ErrorCode } from '../errors.js';
import { declaredLength } from './middleware/json-body.js';

export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () => new AppError(ErrorCode.PAYLOAD_TOO_LARGE, `Request body is larger than ${limit} bytes`);
  const declared = req.headers['content-length'];
  const length = declared === undefined ? null : declaredLength(declared);
  if (length !== null && !Number.isSafeInteger(length)) {
    return Promise.reject(new AppError(ErrorCode.INVALID_REQUEST, 'Content-Length must be a whole number of bytes'));
  }
  if (length !== null && length > limit) {
    req.pause();
    return Promise.reject(tooLarge());
  }
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    req.pause();
    return Promise.reject(new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 'Send the body uncompressed: its signature is over the bytes as sent'));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (err: AppError | null) => {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('aborted', onAborted);
      req.removeListener('close', onAborted);
      req.removeListener('error', onAborted);
      if (err) {
        req.pause();
        reject(err);
      } else {
        resolve(Buffer.concat(chunks, received));
      }
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = () =>
      finish(length !== null && received !== length ? new AppError(ErrorCode.INVALID_REQUEST, 'Request body did not match its Content-Length') : null);
    const onAborted = () => finish(new AppError(ErrorCode.INVALID_REQUEST, 'Request body was not received completely'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('close', onAborted);
    req.on('error', onAborted);
  });
}
