// `pds workspace export` and `pds workspace import` as an operator runs them: to and from a
// file or stdout/stdin, the summary on stderr (stdout carries the data), per-line errors with
// their numbers and a failing exit code, and --json summaries for scripts.
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis } from '../../src/dev/local-redis.js';
import { connectRedis, createRedis } from '../../src/store/redis/redis.js';
import { testOps } from '../support/admin.js';
import { cli, oneJsonLine, type CliResult } from '../support/cli.js';
import { testRedisUrl } from '../support/hooks.js';
import { testRedis } from '../support/service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function cliWithInput(args: string[], input: string): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/index.ts', ...args],
      { cwd: ROOT, env: { ...process.env, REDIS_URL: testRedisUrl(), NODE_ENV: 'test' }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

describe('cli: workspace export and import', function () {
  this.timeout(60_000);
  let redis: Redis;
  let dir: string;
  before(() => {
    redis = testRedis();
    dir = mkdtempSync(join(tmpdir(), 'pds-cli-transfer-'));
  });
  after(() => {
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports to a file and to stdout, and imports from a file and from stdin', async () => {
    const ops = testOps(redis);
    const source = (await ops.createWorkspace({ name: 's' })).workspaceId;
    for (let i = 0; i < 12; i++) await ops.setPlayerValue(source, String(i), 'coins', { n: i });
    const file = join(dir, 'players.ndjson');

    const toFile = await cli(['workspace', 'export', source, '--out', file]);
    expect(toFile.code, toFile.stderr).to.equal(0);
    expect(toFile.stdout).to.equal('');
    expect(toFile.stderr).to.match(new RegExp(`exported workspace ${source} to .*: 12 players, 12 keys, \\d+ bytes in [\\d.]+ s`));
    expect(existsSync(`${file}.partial`)).to.equal(false);
    const text = readFileSync(file, 'utf8');
    expect(text.trimEnd().split('\n')).to.have.length(12);

    const toStdout = await cli(['workspace', 'export', source, '--json']);
    expect(toStdout.code).to.equal(0);
    expect(toStdout.stdout.split('\n').sort()).to.deep.equal(text.split('\n').sort());
    expect(JSON.parse(toStdout.stderr)).to.deep.include({ players: 12, keys: 12, bytes: Buffer.byteLength(text), out: '-' });

    const fromFile = (await ops.createWorkspace({ name: 'a' })).workspaceId;
    const imported = oneJsonLine(await cli(['workspace', 'import', fromFile, '--in', file, '--json']));
    expect(imported).to.deep.include({ complete: true, imported: 12, mode: 'skip' });

    const fromStdin = (await ops.createWorkspace({ name: 'b' })).workspaceId;
    const piped = await cliWithInput(['workspace', 'import', fromStdin, '--mode', 'fail'], text);
    expect(piped.code, piped.stderr).to.equal(0);
    expect(piped.stdout).to.match(/imported into workspace .* \(mode fail\) in [\d.]+ s: 12 lines, 12 new, 0 replaced, 0 unchanged, 0 skipped, 0 failed/);
    expect((await ops.exportPlayer(fromStdin, '11')).data).to.deep.equal((await ops.exportPlayer(source, '11')).data);
  });

  it('export --out never writes through a symbolic link planted where its temporary file goes', async () => {
    const ops = testOps(redis);
    const source = (await ops.createWorkspace({ name: 'linked' })).workspaceId;
    await ops.setPlayerValue(source, '1', 'coins', 1);
    const file = join(dir, 'linked.ndjson');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    // What another local user could plant where the export used to write (FILE.partial).
    symlinkSync(victim, `${file}.partial`);
    const res = await cli(['workspace', 'export', source, '--out', file]);
    expect(res.code, res.stderr).to.equal(0);
    expect(readFileSync(victim, 'utf8')).to.equal('precious\n');
    expect(readFileSync(file, 'utf8')).to.match(/^\{"userId":"1"/);
    expect(lstatSync(`${file}.partial`).isSymbolicLink()).to.equal(true);
    expect(readdirSync(dir).filter((f) => f.startsWith('linked.ndjson.') && f !== 'linked.ndjson.partial')).to.deep.equal([]);
  });

  it('names each bad line and exits 1; an unknown mode is refused before anything is read', async () => {
    const ops = testOps(redis);
    const id = (await ops.createWorkspace({ name: 'w' })).workspaceId;
    const file = join(dir, 'bad.ndjson');
    writeFileSync(file, `{"userId":"1","version":1,"data":{"a":{"value":1,"updated_at":"2026-01-01T00:00:00.000Z"}}}\n{"userId":"2"\n`);
    const res = await cli(['workspace', 'import', id, '--in', file]);
    expect(res.code).to.equal(1);
    expect(res.stdout).to.match(/1 new, .* 1 failed/);
    expect(res.stdout).to.match(/line 2: INVALID_REQUEST: not valid JSON/);
    const mode = await cli(['workspace', 'import', id, '--in', file, '--mode', 'merge']);
    expect(mode.code).to.equal(2);
    expect(mode.stderr).to.match(/mode must be one of skip, overwrite, fail/);
  });

  it('export --all and import --all copy an installation through a folder; --all is required', async () => {
    const source = await startLocalRedis({ dataDir: join(dir, 'source') });
    const target = await startLocalRedis({ dataDir: join(dir, 'target') });
    const redis = createRedis({ url: source.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    const copy = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    try {
      await connectRedis(redis, 5000);
      await connectRedis(copy, 5000);
      const ops = new AdminOperations(redis, { actor: 'test' });
      const id = (await ops.createWorkspace({ name: 'w', plan: 'pro' })).workspaceId;
      await ops.setPlayerValue(id, '1', 'coins', 3);
      const folder = join(dir, 'backup');
      const refused = await cli(['export', '--out', folder], { REDIS_URL: source.url });
      expect(refused.code).to.equal(2);
      expect(refused.stderr).to.match(/needs --all/);
      const manifest = oneJsonLine(await cli(['export', '--all', '--out', folder, '--json'], { REDIS_URL: source.url }));
      expect(manifest.counts).to.deep.include({ workspaces: 1, apiKeys: 1, players: 1, keys: 1 });
      const again = await cli(['export', '--all', '--out', folder], { REDIS_URL: source.url });
      expect(again.stderr).to.match(/not empty/);
      const imported = await cli(['import', '--all', '--in', folder], { REDIS_URL: target.url });
      expect(imported.code, imported.stderr).to.equal(0);
      expect(imported.stdout).to.match(/workspaces 1 new, 0 existing; API keys 1 new/);
      const restored = new AdminOperations(copy, { actor: 'test' });
      expect((await restored.exportPlayer(id, '1')).data).to.deep.equal((await ops.exportPlayer(id, '1')).data);
      expect((await restored.getWorkspace(id)).plan).to.equal('pro');

      // Into an installation where the backup's workspace id belongs to another workspace.
      const third = await startLocalRedis({ dataDir: join(dir, 'third') });
      const thirdRedis = createRedis({ url: third.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
      try {
        await connectRedis(thirdRedis, 5000);
        await new AdminOperations(thirdRedis, { actor: 'test' }).createWorkspace({ id, name: 'someone else' });
        const refusedImport = await cli(['import', '--all', '--in', folder], { REDIS_URL: third.url });
        expect(refusedImport.code).to.equal(2);
        expect(refusedImport.stderr).to.include(`${id} ("w" in the backup, "someone else" here)`).and.match(/--on-collision rename/);
        const asJson = await cli(['import', '--all', '--in', folder, '--json'], { REDIS_URL: third.url });
        expect(JSON.parse(asJson.stderr)).to.deep.include({ code: 'CONFLICT', data: { collisions: [{ workspaceId: id, name: 'w', existingName: 'someone else' }] } });
        const renamed = await cli(['import', '--all', '--in', folder, '--on-collision', 'rename'], { REDIS_URL: third.url });
        expect(renamed.code, renamed.stderr).to.equal(0);
        const to = new RegExp(`workspace ${id} restored as (\\S+): its id is another workspace's here`).exec(renamed.stdout)?.[1];
        expect(to, renamed.stdout).to.be.a('string');
        const moved = new AdminOperations(thirdRedis, { actor: 'test' });
        expect((await moved.exportPlayer(to!, '1')).data).to.deep.equal((await ops.exportPlayer(id, '1')).data);
        expect((await moved.getWorkspace(id)).name).to.equal('someone else');
        const badOption = await cli(['import', '--all', '--in', folder, '--on-collision', 'merge'], { REDIS_URL: third.url });
        expect([badOption.code, badOption.stderr]).to.deep.equal([2, 'error: on-collision must be one of refuse, rename, skip\n']);
      } finally {
        thirdRedis.disconnect();
        await third.stop();
      }
    } finally {
      redis.disconnect();
      copy.disconnect();
      await source.stop();
      await target.stop();
    }
  });
});
