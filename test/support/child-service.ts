// Runs the real service entry point (src/main.ts) as a child process, for tests that kill or
// signal it. Its JSON log lines are collected; the base URL comes from its start-up line.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface ChildService {
  readonly process: ChildProcess;
  readonly baseUrl: string;
  /** Every log line the service wrote so far (stdout and stderr). */
  readonly logs: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** LOG_LEVEL must leave `info` on: the start-up line is how the URL is found. */
export async function spawnService(env: Record<string, string>, timeoutMs = 20_000): Promise<ChildService> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      // One address (127.0.0.1) for every caller: see testConfig.
      AUTH_FAILURES_PER_MINUTE: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not start within ${timeoutMs} ms:\n${logs.join('\n')}`));
    }, timeoutMs);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        if (line.includes('player data service listening')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { url: string }).url);
        }
      });
    }
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code ?? signal}) before listening:\n${logs.join('\n')}`));
    });
  });
  return { process: child, baseUrl, logs, exited };
}

/** `total` increments of one key, `inFlight` at a time, spread round-robin over the services. */
export async function incrementOneKey(
  baseUrls: readonly string[],
  apiKey: string,
  total: number,
  inFlight: number,
): Promise<{ statuses: number[]; ms: number }> {
  const started = Date.now();
  let next = 0;
  const statuses: number[] = [];
  const workers = Array.from({ length: inFlight }, async (_, w) => {
    const base = baseUrls[w % baseUrls.length]!;
    while (next < total) {
      next++;
      const res = await fetch(base + '/data/increment', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ userId: 'shared', key: 'count' }),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
  });
  await Promise.all(workers);
  return { statuses, ms: Date.now() - started };
}
