// The `ban`, `violations` and `key set-dev` commands, run as an operator would run them.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { freshIPv4 } from '../support/gate.js';
import { testRedisUrl } from '../support/hooks.js';
import { newWorkspace, testRedis } from '../support/service.js';

const exec = promisify(execFile);

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', ...args], {
      env: { ...process.env, REDIS_URL: testRedisUrl(), LOG_LEVEL: 'silent' },
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('CLI: ban, violations, key set-dev', function () {
  this.timeout(60_000);
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('adds, lists and removes a ban, printing one JSON line with --json', async () => {
    const address = freshIPv4();
    const added = await cli('ban', 'add', address, '--reason', 'by hand', '--json');
    expect(added.code, added.stderr).to.equal(0);
    expect(JSON.parse(added.stdout)).to.deep.include({ address, source: 'operator', note: 'by hand' });
    // Paged: starting just before the address, the first page of one holds it. (The three reads
    // run side by side: each command is a process of its own, most of its time tsx starting.)
    const [listed, text, zero] = await Promise.all([
      cli('ban', 'list', '--limit', '1', '--after', address.slice(0, -1), '--json'),
      cli('ban', 'list', '--limit', '1', '--after', address.slice(0, -1)),
      cli('ban', 'list', '--limit', '0'),
    ]);
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout.trim().split('\n')).to.have.length(1);
    const page = JSON.parse(listed.stdout);
    expect(page.bans.map((b: { address: string }) => b.address)).to.deep.equal([address]);
    expect(text.stdout.split('\n')[0]).to.match(new RegExp(`^${address.replace(/\./g, '\\.')}  since`));
    if (page.next !== null) expect(text.stdout).to.include(`more: ban list --after ${address}`);
    expect(zero.code).to.equal(2);
    const removed = await cli('ban', 'remove', address);
    expect(removed.code).to.equal(0);
    expect(removed.stdout).to.match(new RegExp(`lifted the ban on ${address.replace(/\./g, '\\.')}`));
    const again = await cli('ban', 'remove', address, '--json');
    expect(again.code).to.equal(2);
    expect(JSON.parse(again.stderr)).to.deep.equal({ success: false, error: `${address} is not banned`, code: 'NOT_FOUND' });
  });

  it('marks a development key, refuses an ambiguous flag, and lists violations', async () => {
    const ws = await newWorkspace(redis);
    // Three commands that do not depend on one another, side by side (each a process of its own).
    const [on, both, violations] = await Promise.all([
      cli('key', 'set-dev', ws.keyId, '--on', '--json'),
      cli('key', 'set-dev', ws.keyId, '--on', '--off'),
      cli('violations', '--limit', '3', '--json'),
    ]);
    expect(on.code, on.stderr).to.equal(0);
    expect(JSON.parse(on.stdout)).to.deep.include({ keyId: ws.keyId, dev: true });
    expect(both.code).to.equal(2);
    expect(both.stderr).to.match(/exactly one of --on or --off/);
    expect(violations.code, violations.stderr).to.equal(0);
    expect(JSON.parse(violations.stdout)).to.be.an('array');
  });
});
