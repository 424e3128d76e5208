// The bench's load generator: wrk (Debian's package `wrk`), a C program in a process of its own,
// driven by a Lua script that sends a scenario's rotating requests in turn. autocannon ran
// inside the bench's own Node process and spent about as much CPU per request as the service
// under test, on the same two cores: every target was held to the rate autocannon could send,
// which pressed all ratios toward 1 (docs/performance.md, "one load generator").
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Request as AutocannonRequest } from 'autocannon';

const run = promisify(execFile);

/** Distinct requests written into the script; the rotation repeats after them. */
export const WRK_REQUESTS = 20_000;

export interface WrkResult {
  readonly requests: number;
  readonly durationSeconds: number;
  /** Answers with a status of 400 or more (wrk's own count). */
  readonly non2xx: number;
  readonly socketErrors: number;
  readonly timeouts: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

let available: boolean | undefined;
export async function wrkAvailable(): Promise<boolean> {
  if (available === undefined) {
    available = await run('wrk', ['--version']).then(
      () => true,
      // wrk --version exits 1 after printing its version.
      (err: { stdout?: string; stderr?: string }) => /^wrk /m.test(`${err.stdout ?? ''}${err.stderr ?? ''}`),
    );
  }
  return available;
}

const luaString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The scenario's first `count` requests, as autocannon's setupRequest would build them one after another. */
export function materialize(requests: AutocannonRequest[], count: number): Array<{ method: string; path: string; headers: Record<string, string>; body: string }> {
  const setup = (requests[0] as { setupRequest?: (r: Record<string, unknown>) => Record<string, unknown> }).setupRequest;
  const fixed = requests[0] as unknown as { method?: string; path?: string; headers?: Record<string, string>; body?: string };
  return Array.from({ length: count }, () => {
    const r = setup ? setup({}) : { ...fixed };
    return {
      method: String(r['method'] ?? 'GET'),
      path: String(r['path'] ?? '/'),
      headers: (r['headers'] as Record<string, string> | undefined) ?? {},
      body: String(r['body'] ?? ''),
    };
  });
}

/** A wrk script sending `requests` in turn over every connection, and printing a JSON summary. */
export function wrkScript(requests: ReturnType<typeof materialize>): string {
  const lines = requests.map((r) => {
    const headers = Object.entries(r.headers).map(([k, v]) => `[${luaString(k)}]=${luaString(v)}`).join(',');
    return `{${luaString(r.method)},${luaString(r.path)},{${headers}},${r.body === '' ? 'nil' : luaString(r.body)}}`;
  });
  return [
    'local specs = {',
    lines.join(',\n'),
    '}',
    'local built = {}',
    'local i = 0',
    'init = function()',
    '  for n, s in ipairs(specs) do built[n] = wrk.format(s[1], s[2], s[3], s[4]) end',
    'end',
    'request = function()',
    '  i = i % #built + 1',
    '  return built[i]',
    'end',
    'done = function(summary, latency)',
    '  local e = summary.errors',
    '  io.write(string.format(\'WRK_JSON {"requests":%d,"duration_us":%d,"non2xx":%d,"socket":%d,"timeouts":%d,"p50":%d,"p99":%d,"max":%d}\\n\',',
    '    summary.requests, summary.duration, e.status, e.connect + e.read + e.write, e.timeout,',
    '    latency:percentile(50), latency:percentile(99), latency.max))',
    'end',
    '',
  ].join('\n');
}

/** One pass of wrk (one thread: the bench's other processes need the other core) against `url`. */
export async function runWrk(url: string, requests: AutocannonRequest[], connections: number, durationSeconds: number): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pds-wrk-'));
  try {
    const script = join(dir, 'rotate.lua');
    writeFileSync(script, wrkScript(materialize(requests, WRK_REQUESTS)));
    const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${durationSeconds}s`, '--timeout', '10s', '-s', script, url], {
      maxBuffer: 1 << 20,
    });
    const line = /WRK_JSON (\{.*\})/.exec(stdout)?.[1];
    if (!line) throw new Error(`wrk printed no summary:\n${stdout}`);
    const j = JSON.parse(line) as Record<string, number>;
    return {
      requests: j['requests']!,
      durationSeconds: j['duration_us']! / 1e6,
      non2xx: j['non2xx']!,
      socketErrors: j['socket']!,
      timeouts: j['timeouts']!,
      p50: j['p50']! / 1000,
      p99: j['p99']! / 1000,
      max: j['max']! / 1000,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
