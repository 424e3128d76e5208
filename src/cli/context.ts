// What every CLI command needs: the config, a Redis connection, the admin operations acting as
// `cli:<os user>`, and one way to print results (a JSON line with --json, readable text
// otherwise) and errors (stderr, non-zero exit).
import { AppError, ErrorCode, badRequest, errorBody } from '../errors.js';
import type { CliRuntime } from './runtime.js';

export type CliContext = CliRuntime;

export interface OutputOptions {
  json?: boolean;
}

export interface ConfirmOptions extends OutputOptions {
  yes?: boolean;
}

/** Destructive commands run only with --yes, checked before anything touches Redis. */
export function confirm(opts: ConfirmOptions, what: string): void {
  if (!opts.yes) throw badRequest(`${what} cannot be undone: run again with --yes to confirm`);
}

function fail(options: OutputOptions, err: unknown): void {
  const message = err instanceof Error ? err.message : String(err);
  if (options.json) {
    const code = err instanceof AppError ? err.code : ErrorCode.INTERNAL;
    // The extras (a refused restore's collisions, a conflict's version) as the admin API sends them.
    process.stderr.write(`${JSON.stringify(errorBody(message, code, err instanceof AppError ? err.extras : {}))}\n`);
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
  let runtime: CliRuntime | undefined;
  try {
    precheck?.();
    const { openRuntime } = await import('./runtime.js');
    runtime = await openRuntime(options);
    const result = await action(runtime);
    out.write(options.json ? `${JSON.stringify(result)}\n` : `${human(result)}\n`);
  } catch (err) {
    fail(options, err);
  } finally {
    const redis = runtime?.redis;
    if (redis) await redis.quit().catch(() => redis.disconnect());
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
