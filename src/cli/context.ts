// What every CLI command needs: the config, a Redis connection, the admin operations, and one
// way to print results (a JSON line with --json, readable text otherwise) and errors.
import { loadConfig, type Config } from '../config.js';
import { AdminOperations } from '../admin/operations.js';
import { AppError } from '../errors.js';
import { connectRedis, createRedis, type RedisClient } from '../store/redis.js';
import { redisSettings, describeRedis } from '../server.js';

export interface CliContext {
  readonly config: Config;
  readonly redis: RedisClient;
  readonly ops: AdminOperations;
}

export interface OutputOptions {
  json?: boolean;
}

/** Runs one command against Redis, prints its result, and sets the exit code on failure. */
export async function run<T>(
  options: OutputOptions,
  action: (ctx: CliContext) => Promise<T>,
  human: (result: T) => string,
): Promise<void> {
  let redis: RedisClient | undefined;
  try {
    const config = loadConfig();
    redis = createRedis({ ...redisSettings(config), commandTimeoutMs: 10_000 });
    try {
      await connectRedis(redis, 3000);
    } catch (err) {
      throw new Error(`Cannot reach Redis at ${describeRedis(config)} (set REDIS_URL or REDIS_CLUSTER_NODES): ${(err as Error).message}`);
    }
    const result = await action({ config, redis, ops: new AdminOperations(redis) });
    process.stdout.write(options.json ? `${JSON.stringify(result)}\n` : `${human(result)}\n`);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (options.json) process.stderr.write(`${JSON.stringify({ success: false, error: message })}\n`);
    else process.stderr.write(`error: ${message}\n`);
    process.exitCode = err instanceof AppError && err.status < 500 ? 2 : 1;
  } finally {
    if (redis) await redis.quit().catch(() => redis?.disconnect());
  }
}
