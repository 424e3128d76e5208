// Runs the admin command line as a child process against the test Redis, as an operator would.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { testRedisUrl } from './hooks.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/index.ts', ...args],
      { cwd: ROOT, env: { ...process.env, REDIS_URL: testRedisUrl(), NODE_ENV: 'test', ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** --json prints exactly one line of JSON on success. */
export function oneJsonLine(result: CliResult): any {
  expect(result.code, result.stderr).to.equal(0);
  expect(result.stdout.endsWith('\n')).to.equal(true);
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines, result.stdout).to.have.length(1);
  return JSON.parse(lines[0]!);
}
