// What every CLI command needs: the config, a Redis connection, the admin operations acting as
// `cli:<os user>`, and one way to print results (a JSON line with --json, readable text
// otherwise) and errors (stderr, non-zero exit).
import { userInfo } from 'node:os';
import { loadConfig, type Config } from '../config.js';
import { AdminOperations } from '../admin/operations.js';
import { AppError, ErrorCode, badRequest, errorBody } from '../errors.js';
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

export interface ConfirmOptions extends OutputOptions {
  yes?: boolean;
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

/** Destructive commands run only with --yes, checked before anything touches Redis. */
export function confirm(opts: ConfirmOptions, what: string): void {
  if (!opts.yes) throw badRequest(`${what} cannot be undone: run again with --yes to confirm`);
}

function fail(options: OutputOptions, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (options.json) {
    const code = err instanceof AppError ? err.code : ErrorCode.INTERNAL;
    process.stderr.write(`${JSON.stringify(errorBody(message, code))}\n`);
  }
  else process.stderr.write(`error: ${message}\n`);
  process.exitCode = err instanceof AppError && err.status < 500 ? 2 : 1;
}

/** Runs one command against Redis, prints its result, and sets the exit code on failure. */
export async function run<T>(
  options: OutputOptions,
  action: (ctx: CliContext) => Promise<T>,
  human: (result: T) => string,
  precheck?: () => void,
  /** Where the result goes: stdout, unless stdout carries the command's data (an export). */
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  let redis: RedisClient | undefined;
  try {
    precheck?.();
    const config = loadConfig();
    redis = createRedis({ ...redisSettings(config), commandTimeoutMs: 10_000 });
    try {
      await connectRedis(redis, 3000);
    } catch (err) {
      throw new Error(`Cannot reach Redis at ${describeRedis(config)} (set REDIS_URL or REDIS_CLUSTER_NODES): ${(err as Error).message}`);
    }
    const ops = new AdminOperations(redis, { actor: cliActor(), config });
    const result = await action({ config, redis, ops });
    out.write(options.json ? `${JSON.stringify(result)}\n` : `${human(result)}\n`);
  } catch (err) {
    fail(options, err);
  } finally {
    if (redis) await redis.quit().catch(() => redis?.disconnect());
  }
}

/** Lays rows out in columns for people; --json is the format for scripts. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
