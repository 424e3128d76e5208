// The quick start as a new operator runs it (from source, in a folder of its own, on the test
// Redis): it prints the console's address and an admin token that signs in, keeps one demo key
// (the next start rotates it: the old key stops), and says clearly when the Redis that
// REDIS_URL names does not answer.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import { freePort } from '../../src/dev/local-redis.js';
import { testConfig } from '../support/service.js';

const testRedisUrl = () => testConfig().redisUrl!;

const SCRIPT = fileURLToPath(new URL('../../src/dev/quickstart.ts', import.meta.url));
// tsx's loader by its path (import.meta.resolve('tsx') in a test unsettles mocha's own tsx).
const TSX = pathToFileURL(fileURLToPath(new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url))).href;

interface Run {
  readonly child: ChildProcess;
  readonly output: Promise<string>;
  readonly exited: Promise<number | null>;
}

/** Starts the quick start in `dir`; `output` resolves with stdout once it serves (or with everything once it exits). */
function quickstart(dir: string, env: Record<string, string>): Run {
  const child = spawn(process.execPath, ['--import', TSX, SCRIPT], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', PORT: '0', ADMIN_PORT: '0', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = new Promise<string>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('Ctrl-C stops')) resolve(text);
    });
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    void exited.then(() => resolve(text));
  });
  return { child, output, exited };
}

async function stop(run: Run): Promise<void> {
  run.child.kill('SIGINT');
  await run.exited;
}

describe('npm run quickstart', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'pds-quickstart-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the console and an admin token that signs in, and keeps one demo key, rotated on every start', async () => {
    const first = quickstart(dir, { REDIS_URL: testRedisUrl() });
    const out1 = await first.output;
    const consoleUrl = /Operator console: (http:\/\/\S+\/console\/)/.exec(out1)?.[1];
    const token = /admin token[^\n]*\n\n {2}([0-9a-f]{48})\n/.exec(out1)?.[1];
    const key1 = /export PDS_KEY=(pds_\S+)/.exec(out1)?.[1];
    const base = /listening on (http:\/\/\S+\/api\/v1)/.exec(out1)?.[1];
    expect(consoleUrl && token && key1 && base, out1).to.be.a('string');
    const page = await fetch(consoleUrl!);
    expect(page.status).to.equal(200);
    const signIn = await fetch(new URL('/console/session', consoleUrl).href, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    expect(signIn.status).to.equal(200);
    expect((await fetch(`${base}/ping`, { headers: { 'x-api-key': key1! } })).status).to.equal(200);
    await stop(first);

    const second = quickstart(dir, { REDIS_URL: testRedisUrl() });
    const out2 = await second.output;
    const key2 = /export PDS_KEY=(pds_\S+)/.exec(out2)?.[1];
    const base2 = /listening on (http:\/\/\S+\/api\/v1)/.exec(out2)?.[1];
    const workspace = (text: string) => /Demo workspace (\S+),/.exec(text)?.[1];
    expect(workspace(out2)).to.equal(workspace(out1));
    expect(key2).to.be.a('string').and.not.equal(key1);
    expect((await fetch(`${base2}/ping`, { headers: { 'x-api-key': key2! } })).status).to.equal(200);
    expect((await fetch(`${base2}/ping`, { headers: { 'x-api-key': key1! } })).status).to.equal(401);
    await stop(second);
  });

  it('says which Redis does not answer, and what to do, when REDIS_URL names one that is down', async () => {
    const port = await freePort();
    const run = quickstart(mkdtempSync(join(tmpdir(), 'pds-quickstart-')), { REDIS_URL: `redis://127.0.0.1:${port}` });
    const code = await run.exited;
    const out = await run.output;
    expect(code).to.equal(1);
    expect(out, out).to.include(`Cannot reach the Redis that REDIS_URL names (redis://127.0.0.1:${port})`).and.include('unset REDIS_URL');
    expect(out).to.not.include('Connection is closed');
  });
});
