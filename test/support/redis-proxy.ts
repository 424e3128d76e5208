// A TCP proxy in front of a real Redis that records what clients send and can hold Redis's
// replies: it shows what the service sends before it has an answer (round-trip structure),
// without mocking Redis.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface RedisProxy {
  readonly url: string;
  /** Everything clients sent since the last reset, as text. */
  sent(): string;
  reset(): void;
  /** Hold Redis's replies until release(). */
  hold(): void;
  /**
   * Hold Redis's replies from the moment a client sends a command matching `command` (its
   * reply and every later one) until release(): what came before (an idempotency claim, say)
   * is answered as usual.
   */
  holdFrom(command: RegExp): void;
  release(): void;
  /** Delays each of Redis's replies by `ms` from now on (latency: 0 ends it), keeping their order. */
  delay(ms: number): void;
  close(): Promise<void>;
}

export async function startRedisProxy(upstreamPort: number): Promise<RedisProxy> {
  let log = '';
  let holding = false;
  let holdOn: RegExp | undefined;
  let delayMs = 0;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(upstreamPort, '127.0.0.1');
    // Without it, Nagle's algorithm holds a small write (a pub/sub event) while an earlier one
    // waits for its ACK: the proxy would reorder what the service sees against a direct Redis.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => {
      const text = chunk.toString('latin1');
      log += text;
      if (holdOn?.test(text)) {
        holding = true;
        holdOn = undefined;
      }
      upstream.write(chunk);
    });
    // When the connection's last delayed reply is due: a reply never overtakes one before it.
    let dueAt = 0;
    upstream.on('data', (chunk) => {
      if (holding) return void held.push(() => client.write(chunk));
      const now = Date.now();
      dueAt = Math.max(dueAt, now + delayMs);
      if (dueAt <= now) client.write(chunk);
      else setTimeout(() => client.write(chunk), dueAt - now);
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
    holdFrom: (command) => {
      holdOn = command;
    },
    delay: (ms) => {
      delayMs = ms;
    },
    release: () => {
      holding = false;
      holdOn = undefined;
      for (const write of held.splice(0)) write();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
