// Answers requests that never reach Koa, because Node's HTTP parser refused them (malformed
// request line or headers, headers too large, a request that trickled in past its timeout),
// in the same JSON envelope as every other error, instead of Node's bare status line.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ErrorCode, errorBody } from '../errors.js';

const ANSWERS: Record<string, [number, string, string, ErrorCode]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are too large', ErrorCode.REQUEST_HEADERS_TOO_LARGE],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request was not received in time', ErrorCode.REQUEST_TIMEOUT],
};
const MALFORMED: [number, string, string, ErrorCode] = [400, 'Bad Request', 'Malformed HTTP request', ErrorCode.INVALID_REQUEST];

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's own rule: answer unless a response already started on this socket (the peer would
    // get two); a response still being prepared for an earlier request is abandoned.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const [status, reason, message, code] = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify(errorBody(message, code));
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroy();
  });
}
