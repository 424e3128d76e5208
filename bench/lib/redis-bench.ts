// The datastore's ceiling: redis-benchmark (the Debian binary, when on the PATH) running the
// commands behind each endpoint, with as many connections as the HTTP load, against the
// bench Redis. Keys rotate over as many workspaces as the bench seeds.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { encodeEntry } from '../../src/domain/entry.js';
import { SCRIPTS } from '../../src/store/scripts.js';

const run = promisify(execFile);

function sha(name: string): string {
  const script = SCRIPTS.find((s) => s.name === name);
  if (!script) throw new Error(`no script named ${name}`);
  return script.sha1;
}

/** Command lines, with __rand_int__ rotating the workspace (redis-benchmark -r). */
export function ceilingCommands(): Record<string, string[]> {
  const player = 'pds:p:{bench-__rand_int__:u1}';
  const kilobyte = encodeEntry(JSON.stringify('x'.repeat(1000)), Date.now());
  return {
    hget: ['HGET', player, 'k1'],
    hgetall: ['HGETALL', player],
    rateLimit: [
      // One lease of one request: what a request without a lease in hand runs.
      'EVALSHA', sha('rateLimit'), '1', 'pds:ws:{bench-__rand_int__}:rb', '1000000000', '10000', '1', '0',
    ],
    setEntry: ['EVALSHA', sha('setEntry'), '1', player, 'blob', kilobyte, '1000'],
    incrementEntry: ['EVALSHA', sha('incrementEntry'), '1', 'pds:p:{bench-__rand_int__:hot}', 'coins', '1', '0', String(Date.now()), '1000'],
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
