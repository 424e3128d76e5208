// Drives valgrind's callgrind in a running process (bench:instructions counts the service and
// the references, bench:board-script Redis): counting on and off, and the instructions counted
// since the counters were zeroed.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function valgrindAvailable(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Sends a command to callgrind in the target. vgdb finds the target's pipes by names built
 * from USER and HOST, so it runs with the target's own environment (the service reads HOST
 * as its address).
 */
export function control(pid: number, targetEnv: Record<string, string>, ...args: string[]): void {
  const out = execFileSync('callgrind_control', [...args, String(pid)], {
    encoding: 'utf8',
    env: { ...process.env, ...targetEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (!/OK\./.test(out)) throw new Error(`callgrind_control ${args.join(' ')} ${pid}: ${out.trim()}`);
}

function dumpsOf(dir: string, pid: number): string[] {
  return readdirSync(dir).filter((f) => f.startsWith(`cg.${pid}.`));
}

/** Asks callgrind for a dump and waits for its file: the instructions counted since zeroed. */
export async function dumpTotal(dir: string, pid: number, targetEnv: Record<string, string>): Promise<number> {
  const before = new Set(dumpsOf(dir, pid));
  control(pid, targetEnv, '-d');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const added = dumpsOf(dir, pid).find((f) => !before.has(f));
    if (added) {
      const total = /^totals: (\d+)/m.exec(readFileSync(join(dir, added), 'utf8'));
      if (total) return Number(total[1]);
    }
    if (Date.now() > deadline) throw new Error(`callgrind wrote no dump for process ${pid}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

