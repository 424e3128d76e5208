import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs src/main.ts with exactly these variables (plus PATH), and returns how it ended. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('a bad setting stops the start', () => {
  it('names PORT when it is not a port number, and exits 2 before touching Redis', async function () {
    this.timeout(30_000);
    // An address nothing listens on: the start must fail on the setting, not on the connection.
    const { code, stderr, stdout } = await runMain({ PORT: 'eighty', REDIS_URL: 'redis://127.0.0.1:1' });
    expect(code).to.equal(2);
    expect(stderr).to.match(/^Invalid configuration: PORT must be a whole number between 0 and 65535, got "eighty"$/m);
    expect(stdout).to.equal('');
  });

  it('names the variable for an out-of-range number and for an unknown choice', async function () {
    this.timeout(30_000);
    const range = await runMain({ PORT: '70000' });
    expect(range.code).to.equal(2);
    expect(range.stderr).to.include('PORT must be between 0 and 65535, got 70000');
    const level = await runMain({ LOG_LEVEL: 'loud' });
    expect(level.code).to.equal(2);
    expect(level.stderr).to.include('LOG_LEVEL must be one of');
  });
});
