// An HTTP proxy in front of the real service for the client's failure paths: per request it
// forwards, forwards and then drops the answer (the write is applied, the client never hears of
// it), never answers at all, or answers itself. It records every request it received.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, from /api/v1 on. */
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export type ProxyAction =
  | 'forward'
  /** Forward, wait for the service's whole answer, then close the connection without a byte of it. */
  | 'drop-answer'
  /** Keep the request open and never answer. */
  | 'hang'
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body: unknown };

export interface HttpProxy {
  /** The proxy's base URL, ending in /api/v1. */
  readonly baseUrl: string;
  readonly requests: ProxiedRequest[];
  /** Resolves when the proxy has received its `n`th request (1-based). */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'content-encoding']);

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** `decide(n, request)` picks what happens to the proxy's nth request (1-based). */
export async function startHttpProxy(
  serviceBaseUrl: string,
  decide: (n: number, request: ProxiedRequest) => ProxyAction = () => 'forward',
): Promise<HttpProxy> {
  const origin = new URL(serviceBaseUrl).origin;
  const requests: ProxiedRequest[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const sockets = new Set<Socket>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const request: ProxiedRequest = { method: req.method!, path: req.url!, headers: req.headers, body: await readBody(req) };
    requests.push(request);
    for (const w of waiters.filter((w) => w.n <= requests.length)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
    const action = decide(requests.length, request);
    if (action === 'hang') return;
    if (typeof action === 'object') {
      res.writeHead(action.status, { 'content-type': 'application/json', ...action.headers });
      res.end(JSON.stringify(action.body));
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name) && typeof value === 'string') headers[name] = value;
    }
    const upstream = await fetch(origin + request.path, {
      method: request.method,
      headers,
      body: request.method === 'GET' ? undefined : request.body,
    });
    const text = await upstream.text();
    if (action === 'drop-answer') {
      req.socket.destroy();
      return;
    }
    const answerHeaders: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) answerHeaders[name] = value;
    });
    res.writeHead(upstream.status, answerHeaders);
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v1`,
    requests,
    received: (n) =>
      requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
