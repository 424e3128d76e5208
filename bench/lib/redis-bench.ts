// The datastore's ceiling: redis-benchmark (the Debian binary, when on the PATH) running the
// commands behind each endpoint, with as many connections as the HTTP load, against the
// bench Redis. Keys rotate over as many workspaces as the bench seeds.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { playerLimitsOf } from '../../src/store/players/player-data.js';
import { writeLimitsArg, writePlayerArgs } from '../../src/store/players/script-protocol.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';

const run = promisify(execFile);

function sha(name: string): string {
  const script = SCRIPTS.find((s) => s.name === name);
  if (!script) throw new Error(`no script named ${name}`);
  return script.sha1;
}

export interface WriteCommandOptions {
  /** The loaded script's SHA-1 (default: lua/write-player.lua as the service loads it). */
  readonly sha?: string;
  /** Keep history as the default configuration does (true), or none (HISTORY_MAX_VERSIONS=0). */
  readonly history?: boolean;
  /** The write's clock (ms): its restore point's interval. Default now. */
  readonly nowMs?: number;
}

/** One EVALSHA of lua/write-player.lua, as PlayerDataStore.write sends it. */
export function writeCommand(
  player: string,
  write: Parameters<typeof writePlayerArgs>[1],
  kind: string,
  options: WriteCommandOptions = {},
): string[] {
  const defaults = playerLimitsOf(loadConfig({}));
  const limits = options.history === false ? { ...defaults, history: { ...defaults.history, maxVersions: 0 } } : defaults;
  const args = writePlayerArgs(writeLimitsArg(limits), write, { nowMs: options.nowMs ?? Date.now(), kind, actor: 'key:bench' });
  return ['EVALSHA', options.sha ?? sha('writePlayer'), '6', player, `${player}:h`, `${player}:hc`, `${player}:hm`, `${player}:i:-`, `${player}:m`, ...args];
}

/** The bench's 1 KB set and hot-key increment, as writes. */
export const BENCH_WRITES = {
  set: { ops: [{ op: 'set', key: 'blob', valueJson: JSON.stringify('x'.repeat(1000)) }] },
  increment: { ops: [{ op: 'increment', key: 'coins', amount: 1, defaultValue: 0 }] },
} as const satisfies Record<string, Parameters<typeof writePlayerArgs>[1]>;

/** The two writes the HTTP bench sends (set of a 1 KB value, increment of one hot key), on players named by `tag`. */
export function writeCommands(tag: string, options: WriteCommandOptions = {}): { set: string[]; increment: string[] } {
  const player = `pds:p:{bench-__rand_int__:${tag}}`;
  return {
    set: writeCommand(player, BENCH_WRITES.set, 'set', options),
    increment: writeCommand(player, BENCH_WRITES.increment, 'increment', options),
  };
}

/** Command lines, with __rand_int__ rotating the workspace (redis-benchmark -r). */
export function ceilingCommands(): Record<string, string[]> {
  const player = 'pds:p:{bench-__rand_int__:u1}';
  return {
    hget: ['HGET', player, 'k1'],
    hgetall: ['HGETALL', player],
    rateLimit: [
      // One lease of one request: what a request without a lease in hand runs.
      'EVALSHA', sha('rateLimit'), '1', 'pds:ws:{bench-__rand_int__}:rb', '1000000000', '10000', '1', '0',
    ],
    // The write script as a set and an increment send it, with the default limits (history on).
    writePlayerSet: writeCommands('u1').set,
    writePlayerIncrement: writeCommands('hot').increment,
  };
}

export async function redisBenchmarkAvailable(): Promise<boolean> {
  try {
    await run('redis-benchmark', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** Requests per second of one command line. */
export async function redisBenchmark(
  port: number,
  command: readonly string[],
  options: { connections: number; requests: number; keyspace: number },
): Promise<number> {
  const { stdout } = await run('redis-benchmark', [
    '-h', '127.0.0.1', '-p', String(port),
    '-c', String(options.connections), '-n', String(options.requests), '-r', String(options.keyspace),
    '--csv', ...command,
  ]);
  // CSV: a header line, then "name","rps" and six latencies. The name is the command line, with
  // quotes and commas of its own, so the figures are read from the end.
  const line = stdout.trim().split('\n').pop() ?? '';
  const rps = Number(/"([\d.]+)"(?:,"[\d.]+"){6}$/.exec(line)?.[1]);
  if (!Number.isFinite(rps)) throw new Error(`cannot read redis-benchmark output: ${stdout.slice(0, 200)}`);
  return rps;
}
