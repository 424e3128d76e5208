// A TCP proxy in front of a real Redis that records what clients send and can hold Redis's
// replies: it shows what the service sends before it has an answer (round-trip structure),
// without mocking Redis.
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { hashApiKey } from '../../src/domain/api-key.js';
import type { RunningService } from '../../src/server.js';
import { keys } from '../../src/store/keys.js';
import { call } from './service.js';

export interface RedisProxy {
  readonly url: string;
  /** Everything clients sent since the last reset, as text. */
  sent(): string;
  reset(): void;
  /** Hold Redis's replies until release(). */
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function startRedisProxy(upstreamPort: number): Promise<RedisProxy> {
  let log = '';
  let holding = false;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      log += chunk.toString('latin1');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (holding) held.push(() => client.write(chunk));
      else client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    sent: () => log,
    reset: () => {
      log = '';
    },
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const write of held.splice(0)) write();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Waits until a request with `apiKey` needs Redis for its own command only, so that a test can
 * hold Redis's replies and see that command alone: the service has the key in its cache (which
 * it trusts only once its invalidation subscription is live and the key's own creation event has
 * passed: until then every request looks the key up) and its rate limiter holds at least
 * `leased` requests taken ahead. Observed rather than slept for, since a loaded machine (CI)
 * can take longer than any fixed wait: it pings until a ping sends no key lookup through the
 * proxy, and until the workspace's window counter in Redis, less the requests used (the limit
 * less X-RateLimit-Remaining), shows that many granted and unused.
 */
export async function warmKeyAndLease(options: {
  readonly proxy: RedisProxy;
  readonly service: RunningService;
  /** A direct connection to the same Redis, to read the window's counter. */
  readonly redis: Redis;
  readonly workspaceId: string;
  readonly apiKey: string;
  readonly leased: number;
}): Promise<void> {
  const lookup = keys.apiKey(hashApiKey(options.apiKey));
  for (let attempt = 0; ; attempt++) {
    if (attempt === 500) throw new Error('the service still looked the key up, or leased too few requests, after 500 pings');
    options.proxy.reset();
    const ping = await call(options.service, 'GET', '/ping', { key: options.apiKey });
    if (ping.status !== 200) throw new Error(`ping answered ${ping.status}: ${ping.text}`);
    const cached = !options.proxy.sent().includes(lookup);
    const used = Number(ping.headers.get('x-ratelimit-limit')) - Number(ping.headers.get('x-ratelimit-remaining'));
    const granted = Number((await options.redis.get(keys.rateLimit(options.workspaceId))) ?? 0);
    if (cached && granted - used >= options.leased) return;
    if (!cached) await new Promise((r) => setTimeout(r, 10));
  }
}
