// The datastore's ceiling: redis-benchmark (the Debian binary, when on the PATH) running the
// commands behind each endpoint, with as many connections as the HTTP load, against the
// bench Redis. Keys rotate over as many workspaces as the bench seeds.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { playerLimitsOf, writeLimitsArg, writePlayerArgs } from '../../src/store/players/player-data.js';
import { SCRIPTS } from '../../src/store/redis/scripts.js';

const run = promisify(execFile);

function sha(name: string): string {
  const script = SCRIPTS.find((s) => s.name === name);
  if (!script) throw new Error(`no script named ${name}`);
  return script.sha1;
}

/** One EVALSHA of lua/write-player.lua, as PlayerDataStore.write sends it. */
function writeCommand(player: string, write: Parameters<typeof writePlayerArgs>[1], kind: string): string[] {
  const limits = writeLimitsArg(playerLimitsOf(loadConfig({})));
  const args = writePlayerArgs(limits, write, { nowMs: Date.now(), kind, actor: 'key:bench' });
  return ['EVALSHA', sha('writePlayer'), '3', player, `${player}:h`, `${player}:i:-`, ...args];
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
    writePlayerSet: writeCommand(player, { ops: [{ op: 'set', key: 'blob', valueJson: JSON.stringify('x'.repeat(1000)) }] }, 'set'),
    writePlayerIncrement: writeCommand('pds:p:{bench-__rand_int__:hot}', { ops: [{ op: 'increment', key: 'coins', amount: 1, defaultValue: 0 }] }, 'increment'),
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
