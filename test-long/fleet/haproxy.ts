// Runs Debian's haproxy with deploy/haproxy/haproxy.cfg as it is, its addresses filled in through
// the environment variables the file reads (PDS_BIND, PDS_n, PDS_n_OPS, HAPROXY_STATS_SOCKET),
// and reads the servers' states from its runtime API.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HAPROXY_CFG = 'deploy/haproxy/haproxy.cfg';

export interface Backend {
  readonly port: number;
  readonly opsPort: number;
}

export interface RunningHaproxy {
  readonly baseUrl: string;
  readonly logs: string[];
  /** Each server's status as the health checks decided (`UP`, `DOWN`, `MAINT`, ...), by name (pds1 ..). */
  states(): Promise<Map<string, string>>;
  /** Requests sent again (retries) and to another server (redispatches), summed over the servers. */
  counters(): Promise<{ retries: number; redispatches: number }>;
  stop(): Promise<void>;
}

/** A port free now on 127.0.0.1 (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function ask(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket);
    let text = '';
    conn.on('data', (d) => (text += d.toString('utf8')));
    conn.on('end', () => resolve(text));
    conn.on('error', reject);
    conn.end(command + '\n');
  });
}

export async function startHaproxy(backends: readonly Backend[]): Promise<RunningHaproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'pds-haproxy-'));
  const socket = join(dir, 'admin.sock');
  const port = await freePort();
  const env: Record<string, string> = { PDS_BIND: `127.0.0.1:${port}`, HAPROXY_STATS_SOCKET: socket };
  backends.forEach((b, i) => {
    env[`PDS_${i + 1}`] = `127.0.0.1:${b.port}`;
    env[`PDS_${i + 1}_OPS`] = String(b.opsPort);
  });
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', HAPROXY_CFG], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (d: Buffer) => logs.push(...d.toString('utf8').split('\n').filter(Boolean)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const states = async () => {
    const csv = await ask(socket, 'show stat');
    const out = new Map<string, string>();
    for (const line of csv.split('\n')) {
      const f = line.split(',');
      if (f[0] === 'pds' && f[1] !== 'BACKEND') out.set(f[1]!, f[17]!);
    }
    return out;
  };
  const counters = async () => {
    const csv = await ask(socket, 'show stat');
    let retries = 0;
    let redispatches = 0;
    for (const line of csv.split('\n')) {
      const f = line.split(',');
      if (f[0] === 'pds' && f[1] === 'BACKEND') {
        retries += Number(f[15] || 0);
        redispatches += Number(f[16] || 0);
      }
    }
    return { retries, redispatches };
  };
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${logs.join('\n')}`);
      const now = await states();
      if (now.size === backends.length && [...now.values()].every((s) => s === 'UP')) break;
    } catch (err) {
      if (child.exitCode !== null) throw err;
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not see every instance UP within 15 s: ${logs.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { baseUrl: `http://127.0.0.1:${port}/api/v1`, logs, states, counters, stop };
}
