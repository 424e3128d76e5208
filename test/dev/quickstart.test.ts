// The quick start as a new operator runs it (from source, in a folder of its own, on the test
// Redis or on its own redis-server): it prints the console's address and an admin token that
// signs in, keeps one demo workspace and one demo key across restarts (`--rotate-key` for a new
// one), stops at a taken port before starting anything, binds 127.0.0.1, finds its own Redis
// again after a start that was killed, stops the service before its Redis, and says clearly when
// the Redis that REDIS_URL names does not answer.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Redis } from 'ioredis';
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
function quickstart(dir: string, env: Record<string, string>, args: readonly string[] = []): Run {
  const child = spawn(process.execPath, ['--import', TSX, SCRIPT, ...args], {
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

  it('prints the console and an admin token that signs in, and keeps one demo key across starts, new with --rotate-key', async function () {
    this.timeout(120_000);
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

    const keyFile = join(dir, '.data', 'demo-key');
    expect(readFileSync(keyFile, 'utf8').trim()).to.equal(key1);
    expect(statSync(keyFile).mode & 0o777, 'readable by its owner only').to.equal(0o600);

    const workspace = (text: string) => /Demo workspace (\S+),/.exec(text)?.[1];
    const second = quickstart(dir, { REDIS_URL: testRedisUrl() });
    const out2 = await second.output;
    expect(workspace(out2), out2).to.equal(workspace(out1));
    expect(/export PDS_KEY=(pds_\S+)/.exec(out2)?.[1], 'the same key as at the last start').to.equal(key1);
    expect(out2).to.include('the same as at the last start');
    const base2 = /listening on (http:\/\/\S+\/api\/v1)/.exec(out2)?.[1];
    expect((await fetch(`${base2}/ping`, { headers: { 'x-api-key': key1! } })).status).to.equal(200);
    await stop(second);

    const third = quickstart(dir, { REDIS_URL: testRedisUrl() }, ['--rotate-key']);
    const out3 = await third.output;
    const key3 = /export PDS_KEY=(pds_\S+)/.exec(out3)?.[1];
    const base3 = /listening on (http:\/\/\S+\/api\/v1)/.exec(out3)?.[1];
    expect(workspace(out3), out3).to.equal(workspace(out1));
    expect(key3).to.be.a('string').and.not.equal(key1);
    expect((await fetch(`${base3}/ping`, { headers: { 'x-api-key': key3! } })).status).to.equal(200);
    expect((await fetch(`${base3}/ping`, { headers: { 'x-api-key': key1! } })).status, 'the rotated key stops').to.equal(401);
    expect(readFileSync(keyFile, 'utf8').trim()).to.equal(key3);
    await stop(third);
  });

  it('stops at a taken port with a message naming PORT and ADMIN_PORT, before starting any Redis', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    const fresh = mkdtempSync(join(tmpdir(), 'pds-quickstart-'));
    try {
      const run = quickstart(fresh, { PORT: String(taken), ADMIN_PORT: '0' });
      expect(await run.exited).to.equal(1);
      const out = await run.output;
      expect(out, out).to.include(`PORT=${taken}`).and.include('ADMIN_PORT=').and.include('Port taken');
      expect(out).to.not.include('EADDRINUSE').and.not.include('Started a private redis-server');
    } finally {
      blocker.close();
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('on its own Redis: binds 127.0.0.1, finds its Redis again after a kill -9, keeps one workspace, stops the service before its Redis', async function () {
    this.timeout(120_000);
    const own = mkdtempSync(join(tmpdir(), 'pds-quickstart-'));
    const env = { LOG_LEVEL: 'warn' };
    const pidOf = () => (JSON.parse(readFileSync(join(own, '.data', 'demo-workspace.json'), 'utf8')) as { redisPid: number; redisUrl: string });
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      const first = quickstart(own, env);
      const out1 = await first.output;
      expect(out1, out1).to.include('Started a private redis-server').and.include('bound to 127.0.0.1 only');
      const base = /listening on (http:\/\/\S+\/api\/v1)/.exec(out1)![1]!;
      expect(base).to.match(/^http:\/\/127\.0\.0\.1:/);
      const { redisPid, redisUrl } = pidOf();
      expect(alive(redisPid)).to.equal(true);
      first.child.kill('SIGKILL'); // a closed terminal: the quick start dies, its Redis (a group of its own) stays
      await first.exited;
      expect(alive(redisPid), 'its Redis outlives a killed quick start').to.equal(true);

      const second = quickstart(own, env);
      const out2 = await second.output;
      expect(out2, out2).to.include(`left running by an earlier start (pid ${redisPid})`).and.not.include('Started a private redis-server');
      expect(/Demo workspace (\S+),/.exec(out2)?.[1]).to.equal(/Demo workspace (\S+),/.exec(out1)?.[1]);
      const redis = new Redis(redisUrl);
      try {
        expect(await redis.scard('pds:workspaces'), 'one demo workspace per .data').to.equal(1);
      } finally {
        redis.disconnect();
      }
      const key = /export PDS_KEY=(pds_\S+)/.exec(out2)![1]!;
      const base2 = /listening on (http:\/\/\S+\/api\/v1)/.exec(out2)![1]!;
      expect((await fetch(`${base2}/ping`, { headers: { 'x-api-key': key } })).status).to.equal(200);
      second.child.kill('SIGINT');
      expect(await second.exited).to.equal(0);
      const out = await second.output;
      expect(out, 'the service wrote its last counts before its Redis stopped').to.not.include('could not write');
      expect(alive(redisPid), 'Ctrl-C stops its Redis after the service').to.equal(false);
    } finally {
      try {
        process.kill(pidOf().redisPid, 'SIGKILL');
      } catch {
        // already stopped
      }
      rmSync(own, { recursive: true, force: true });
    }
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
