// What every bench command starts with and ends with: a private redis-server in a temporary
// folder, a client with the service's scripts loaded, and a clean stop; and the one way a
// command reports its failure.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { defineScripts, preloadScripts } from '../../src/store/redis/scripts.js';
import { onInterrupt } from './processes.js';

export interface BenchRedis {
  readonly server: LocalRedis;
  readonly redis: Redis;
  /** The command's temporary folder (Redis keeps its files in `redis/` under it); removed by close(). */
  readonly dataDir: string;
  close(): Promise<void>;
}

export async function startBenchRedis(
  name: string,
  options: { appendfsync?: 'everysec'; appendonly?: boolean; runUnder?: readonly string[]; readyTimeoutMs?: number } = {},
): Promise<BenchRedis> {
  const dataDir = mkdtempSync(join(tmpdir(), `pds-${name}-`));
  // Registered before Redis starts, so an interrupt during its start still removes the folder.
  let server: LocalRedis | undefined;
  let redis: Redis | undefined;
  const close = async () => {
    forget();
    redis?.disconnect();
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  const forget = onInterrupt(close);
  const redisDir = join(dataDir, 'redis');
  mkdirSync(redisDir);
  server = await startLocalRedis({ dataDir: redisDir, ...options });
  redis = new Redis(server.url);
  defineScripts(redis);
  try {
    await preloadScripts(redis);
  } catch (err) {
    await close();
    throw err;
  }
  return { server, redis, dataDir, close };
}

/** Runs a bench command; a failure is printed with its stack and exits 1. */
export function runMain(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    process.stderr.write(`${name} failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
