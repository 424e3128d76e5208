// The heavy half of the CLI, loaded only once a command runs (context.ts imports it lazily), so
// `pds --help` and argument errors start without loading ioredis and the admin operations.
// Says on stderr which Redis it talks to (host and port, never a password), and warns when
// REDIS_URL is unset and it falls back to the default, often someone else's Redis on a laptop
// (not with --json, whose stderr is one JSON line on failure and nothing otherwise).
import { userInfo } from 'node:os';
import { loadConfig, DEFAULT_REDIS_URL, type Config } from '../config.js';
import { AdminOperations } from '../admin/operations.js';
import type { BanOperations } from '../admin/bans.js';
import { connectRedis, createRedis, type RedisClient } from '../store/redis/redis.js';

/** What a command runs with: the config, its Redis connection, and the admin operations acting as the CLI. */
export interface CliRuntime {
  readonly config: Config;
  readonly redis: RedisClient;
  readonly ops: AdminOperations;
  readonly bans: BanOperations;
}

function cliActor(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env['USER'] ?? 'unknown';
  }
  return `cli:${user}`;
}

/** host:port of the Redis the config names (a cluster's seeds), never its password. */
export function redisAddress(config: Config): string {
  if (config.redisClusterNodes) {
    return `cluster ${config.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  }
  const url = new URL(config.redisUrl ?? DEFAULT_REDIS_URL);
  return `${url.hostname}:${url.port || '6379'}`;
}

/** The line the CLI writes to stderr before it connects. */
export function redisNotice(config: Config): string {
  if (config.redisUrl === undefined && config.redisClusterNodes === undefined) {
    return (
      `pds: warning: REDIS_URL is not set, so using the default Redis at ${redisAddress(config)}; ` +
      'set REDIS_URL=redis://host:port to choose the service\'s Redis\n'
    );
  }
  return `pds: Redis at ${redisAddress(config)}\n`;
}

/** With `json`, stderr carries only the JSON error line, for scripts; the notice is for people. */
export async function openRuntime(options: { json?: boolean } = {}): Promise<CliRuntime> {
  const config = loadConfig();
  if (!options.json) process.stderr.write(redisNotice(config));
  const settings = {
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    clusterNodes: config.redisClusterNodes,
    commandTimeoutMs: 10_000,
    connectTimeoutMs: config.redis.connectTimeoutMs,
    autoPipelining: config.redis.autoPipelining,
  };
  const redis = createRedis(settings);
  // Without a listener ioredis prints "[ioredis] Unhandled error event" for every failed
  // attempt; connectRedis turns the failure into the one message the CLI shows.
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
  });
  try {
    await connectRedis(redis, 3000);
  } catch (err) {
    throw new Error(
      `Cannot reach Redis at ${redisAddress(config)} (set REDIS_URL or REDIS_CLUSTER_NODES): ${(lastError ?? (err as Error)).message}`,
    );
  }
  const ops = AdminOperations.forInstallation(redis, config, cliActor());
  return { config, redis, ops, bans: ops.bans };
}
