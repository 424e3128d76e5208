// The production entry point: fails fast and clearly on bad config or an unreachable Redis, and
// is started with the same node flags everywhere.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'chai';

const exec = promisify(execFile);

async function runMain(env: Record<string, string>) {
  try {
    await exec('node', ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, ...env }, timeout: 15_000 });
    return { code: 0, stderr: '', stdout: '' };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('main (npm start)', function () {
  this.timeout(30_000);

  it('stops with a message naming the variable when config is bad', async () => {
    const res = await runMain({ PORT: 'eighty' });
    expect(res.code).to.equal(2);
    expect(res.stderr).to.match(/Invalid configuration: PORT must be a whole number/);
  });

  it('stops with a clear message when Redis does not answer', async () => {
    const res = await runMain({ REDIS_URL: 'redis://127.0.0.1:1', PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'production' });
    expect(res.code).to.equal(1);
    expect(res.stdout + res.stderr).to.match(/Cannot reach Redis at redis:\/\/127\.0\.0\.1:1/);
  });
});

describe('how production starts node', () => {
  it('npm start, the quick start and the Dockerfile give node the same flags, and node takes them', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    const start = /^node ((?:--\S+ )*)dist\/main\.js$/.exec(pkg.scripts['start']!);
    expect(start, 'npm start is "node [flags] dist/main.js"').to.not.equal(null);
    const flags = start![1]!.trim().split(' ');
    expect(flags).to.include('--max-semi-space-size=64');
    expect(pkg.scripts['quickstart']).to.contain(`node ${flags.join(' ')} dist/dev/quickstart.js`);
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'));
    expect(JSON.parse(cmd![1]!)).to.deep.equal(['node', ...flags, 'dist/main.js']);
    // An unknown or misspelt flag makes node exit non-zero here.
    const { stdout } = await exec('node', [...flags, '-p', "require('v8').getHeapSpaceStatistics().length"]);
    expect(Number(stdout)).to.be.greaterThan(0);
  });
});
