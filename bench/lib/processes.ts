// Starts the processes under test (the built service, the reference servers) as children
// with their own ports, waits until they answer, and reads their CPU time from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { freePort } from '../../src/dev/local-redis.js';

export interface Target {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  /** User + system CPU seconds of the process and its children (cluster workers). */
  cpuSeconds(): number;
  /** Read and write system calls the process and its children made so far (/proc/<pid>/io). */
  syscalls(): { reads: number; writes: number };
  stop(): Promise<void>;
}

const TICKS_PER_SECOND = 100;

/**
 * What to undo when the bench is interrupted (SIGINT, SIGTERM): stop every child, then remove
 * every temporary folder. Node's default on SIGINT is to exit at once, leaving the children
 * (services, their workers, reference servers, redis-server) running and the folders behind.
 */
const onStop = new Set<() => Promise<void> | void>();
let interrupted = false;

/** Registers `undo` to run on SIGINT/SIGTERM; returns a function that unregisters it. */
export function onInterrupt(undo: () => Promise<void> | void): () => void {
  installInterruptHandlers();
  onStop.add(undo);
  return () => onStop.delete(undo);
}

let installed = false;
function installInterruptHandlers(): void {
  if (installed) return;
  installed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) return;
      interrupted = true;
      process.stderr.write(`\n${signal}: stopping the bench's processes and removing its temporary folders\n`);
      // Children first (last registered first), then the folders they were writing to.
      const undos = [...onStop].reverse();
      void (async () => {
        for (const undo of undos) await Promise.resolve().then(undo).catch(() => {});
        process.exit(130);
      })();
    });
  }
}

function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function syscallsOf(pid: number): { reads: number; writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: Number(/^syscr: (\d+)/m.exec(io)?.[1] ?? 0), writes: Number(/^syscw: (\d+)/m.exec(io)?.[1] ?? 0) };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function waitForHttp(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with code ${child.exitCode}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface SpawnOptions {
  readonly name: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  /** Path probed until it answers below 500, and the base of the target URL. */
  readonly readyPath: string;
  readonly port?: number;
  /** What runs the args: node itself unless given (valgrind, for instruction counts). */
  readonly command?: string;
  /** How long to wait for the first answer (20 s). */
  readonly readyTimeoutMs?: number;
  /** Where the child's stdout (the service's log) goes: nowhere unless asked. */
  readonly stdout?: 'ignore' | 'inherit';
}

export async function spawnTarget(options: SpawnOptions): Promise<Target> {
  const port = options.port ?? (await freePort());
  const child = spawn(options.command ?? process.execPath, [...options.args], {
    env: { ...process.env, ...options.env, PORT: String(port) },
    stdio: ['ignore', options.stdout ?? 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let forget = () => {};
  const stop = async () => {
    forget();
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  // From its start: an interrupt while it is still starting stops it too.
  forget = onInterrupt(stop);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(url + options.readyPath, child, options.readyTimeoutMs ?? 20_000);
  } catch (err) {
    forget();
    child.kill('SIGKILL');
    throw err;
  }
  const pid = child.pid!;
  return {
    name: options.name,
    url,
    process: child,
    cpuSeconds: () => cpuOf(pid) + childrenOf(pid).reduce((sum, p) => sum + cpuOf(p), 0),
    syscalls: () =>
      [pid, ...childrenOf(pid)].map(syscallsOf).reduce((a, b) => ({ reads: a.reads + b.reads, writes: a.writes + b.writes })),
    stop,
  };
}
