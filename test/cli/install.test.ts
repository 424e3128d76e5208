// `pds` installs as a command: the package packed as npm publishes it (prepack builds dist/),
// installed globally into a temporary prefix, answers --help and runs a command against the
// test Redis. Proves the tarball holds what the CLI needs (dist/, lua/) and the bin is wired.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { testRedisUrl } from '../support/hooks.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('pds as an installed command', function () {
  // npm pack builds the service (tsc and the console) first: a minute on a busy machine.
  this.timeout(300_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pds-install-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('npm pack, then npm install -g of the tarball, gives a working pds', async () => {
    await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'));
    expect(tarball, 'npm pack made a tarball').to.be.a('string');

    const prefix = join(dir, 'prefix');
    // Dependencies come from npm's cache (npm ci filled it), the network only for what is missing.
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball!)], {
      cwd: dir,
      maxBuffer: 16 * 1024 * 1024,
    });
    const pds = join(prefix, 'bin', 'pds');

    const help = await run(pds, ['--help']);
    expect(help.stdout).to.match(/^Usage: pds \[options\] \[command\]/);
    expect(help.stdout).to.include('workspace');

    const env = { ...process.env, REDIS_URL: testRedisUrl() };
    const list = await run(pds, ['workspace', 'list', '--json'], { env, cwd: dir });
    expect(JSON.parse(list.stdout)).to.be.an('array');
    const shown = await run(pds, ['workspace', 'show', 'ws_not_there'], { env, cwd: dir }).catch((err: { code: number; stderr: string }) => err);
    expect(shown.stderr).to.equal(`pds: Redis at ${new URL(testRedisUrl()).host}\nerror: Workspace ws_not_there not found\n`);
  });
});
