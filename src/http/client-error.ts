// Answers requests that never reach Koa, because Node's HTTP parser refused them (malformed
// request line or headers, headers too large, a request that trickled in past its timeout),
// in the same JSON envelope as every other error, instead of Node's bare status line.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

const ANSWERS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request was not received in time'],
};
const MALFORMED: [number, string, string] = [400, 'Bad Request', 'Malformed HTTP request'];

export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Answer only on a socket nothing was written to yet. A parse error while an earlier
    // request on the socket is still being served (garbage pipelined after it) is not answered:
    // its own response would follow ours. A timeout is answered even then, as Node does.
    const pending = (socket as { _httpMessage?: unknown })._httpMessage !== undefined && (socket as { _httpMessage?: unknown })._httpMessage !== null;
    const untouched = (socket as Socket).bytesWritten === 0;
    if (err.code === 'ECONNRESET' || !socket.writable || !untouched || (pending && err.code !== 'ERR_HTTP_REQUEST_TIMEOUT')) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = ANSWERS[err.code ?? ''] ?? MALFORMED;
    const body = JSON.stringify({ success: false, error: message });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
