// Starts a private redis-server process on a free port with a data folder of its own: used
// by the quick start, the tests (when no Docker engine answers) and the benchmark. It never
// touches any other Redis.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export interface LocalRedisOptions {
  /** Folder for the AOF and the log; created if missing. */
  readonly dataDir: string;
  readonly port?: number;
  /** `always`, `everysec` (default) or `no`. */
  readonly appendfsync?: 'always' | 'everysec' | 'no';
  readonly appendonly?: boolean;
  /** Extra `--name value` arguments for redis-server. */
  readonly extraArgs?: readonly string[];
  readonly binary?: string;
  /** A program and its arguments that run redis-server (valgrind, for the bench's instruction counts). */
  readonly runUnder?: readonly string[];
  /** How long to wait for the first PONG (10 s). */
  readonly readyTimeoutMs?: number;
  /**
   * In a process group of its own, so that Ctrl-C in the terminal (SIGINT to the foreground
   * group) does not stop it at the moment it stops its parent: the quick start stops it itself,
   * after the service's last flush.
   */
  readonly detached?: boolean;
}

export interface LocalRedis {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** SHUTDOWN NOSAVE-free stop: asks Redis to exit cleanly, then waits for the process. */
  stop(): Promise<void>;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPing(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Redis settings every Redis we start or ship runs with (the compose file names the same):
 * lists keep their two end nodes plain and compress the ones between with LZF. A player's
 * history list is written at its head and trimmed at its tail, and the entries between are
 * read only to restore a version, so they are kept compressed: a history of 50 saves of a 1 KB
 * inventory takes 24 KB instead of 69 KB (docs/history.md), and AOF rewrites copy compressed
 * nodes as they are.
 */
export const REDIS_LIST_SETTINGS: readonly string[] = ['--list-compress-depth', '1'];

export async function startLocalRedis(options: LocalRedisOptions): Promise<LocalRedis> {
  mkdirSync(options.dataDir, { recursive: true });
  const port = options.port ?? (await freePort());
  const args = [
    '--port', String(port),
    '--bind', '127.0.0.1',
    '--dir', options.dataDir,
    '--appendonly', options.appendonly === false ? 'no' : 'yes',
    '--appendfsync', options.appendfsync ?? 'everysec',
    '--save', '',
    '--daemonize', 'no',
    '--logfile', 'redis.log',
    ...REDIS_LIST_SETTINGS,
    ...(options.extraArgs ?? []),
  ];
  const binary = options.binary ?? 'redis-server';
  const [program, ...programArgs] = options.runUnder ?? [];
  const spawnOptions = { stdio: 'ignore' as const, detached: options.detached === true };
  const child = program === undefined ? spawn(binary, args, spawnOptions) : spawn(program, [...programArgs, binary, ...args], spawnOptions);
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error('redis-server is not installed (apt-get install redis-server), and REDIS_URL is not set')
          : err,
      ),
    );
  });
  await spawned;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForPing(port, child, options.readyTimeoutMs ?? 10_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
    async kill() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
