// `npm run bench`: its own --help, and SIGINT in the middle of a run stops every process it
// started (redis-server, the services and their workers, the reference servers) and removes its
// temporary folder. Runs the bench script itself, tiny, against the built service.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  for (const child of childrenOf(pid)) out.push(child, ...descendantsOf(child));
  return out;
}

/** Running (a zombie waiting to be reaped has stopped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

describe('bench: options and interruption', function () {
  this.timeout(180_000);

  it('npm run bench -- --help prints the bench\'s own options, without building', () => {
    const result = spawnSync('npm', ['run', '--silent', 'bench', '--', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(result.status, result.stderr).to.equal(0);
    expect(result.stdout).to.match(/^Usage: npm run bench -- \[options\]/);
    for (const option of ['--rounds <n>', '[BENCH_ROUNDS]', '--only <labels>', '--no-build', 'SIGINT']) {
      expect(result.stdout).to.include(option);
    }
  });

  it('on SIGINT, stops every child process and removes its temporary folder', async function () {
    if (!existsSync(join(ROOT, 'dist/main.js'))) {
      const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
      expect(built.status).to.equal(0);
    }
    const tmp = mkdtempSync(join(tmpdir(), 'pds-bench-interrupt-'));
    try {
      const bench = spawn(
        process.execPath,
        ['--import', 'tsx', 'bench/run.ts', '--no-build', '--rounds', '1', '--duration', '30', '--workspaces', '5', '--memory-players', '10'],
        { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      bench.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));

      // Wait until redis-server, the three services (one with two workers) and the four
      // reference servers run: at least 9 processes under the bench.
      let seen: number[] = [];
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline && bench.exitCode === null) {
        seen = descendantsOf(bench.pid!);
        if (seen.length >= 9) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(seen.length, stderr).to.be.at.least(9);
      // (tsx keeps its cache in TMPDIR too: only the bench's own folder counts.)
      const benchFolders = () => readdirSync(tmp).filter((name) => name.startsWith('pds-bench-'));
      expect(benchFolders(), 'the bench made its temporary folder').to.have.length(1);

      bench.kill('SIGINT');
      expect(await exited).to.equal(130);
      expect(stderr).to.include("SIGINT: stopping the bench's processes and removing its temporary folders");
      // esbuild's helper processes (tsx) leave when their parent has gone: give them a moment.
      const until = Date.now() + 5000;
      while (seen.some(alive) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const left = seen.filter(alive).map((pid) => `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
      expect(left, 'processes left running').to.deep.equal([]);
      expect(benchFolders(), 'temporary folders left behind').to.deep.equal([]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
