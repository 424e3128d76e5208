// Backups do not bring an erased player back: a workspace export and a whole-installation backup
// taken before an erasure, imported afterwards (API, CLI, --all, every mode), skip the erased
// player and say how many they skipped; an import into a workspace with erasures refuses to run
// without the installation's digest secret, and one into any other workspace needs none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { AdminOperations } from '../../src/admin/operations.js';
import { importHuman } from '../../src/cli/commands/transfer.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { ADMIN_TOKEN, testOps } from '../support/admin.js';
import { cli, oneJsonLine } from '../support/cli.js';
import { DIGEST_SECRET, ERASURE_ENV, freshUserId, keysOfPlayer } from '../support/erasure.js';
import { call, fetchRecorded, testConfig, testRedis, useService } from '../support/service.js';

async function exportText(ops: AdminOperations, workspaceId: string): Promise<string> {
  const exported = await ops.exportWorkspace(workspaceId);
  let text = '';
  for await (const line of exported.lines) text += line;
  return text;
}

describe('backups taken before an erasure', function () {
  this.timeout(60_000);
  const h = useService({ ...ERASURE_ENV, ADMIN_TOKEN });
  const ops = () => testOps(h.redis, { config: testConfig(ERASURE_ENV) });

  async function erasedAfterExport() {
    const ws = await ops().createWorkspace({ name: 'backup-erase', plan: 'pro' });
    const erased = freshUserId();
    const kept = [erased + 1, erased + 2];
    for (const userId of [erased, ...kept]) {
      expect((await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'coins', value: userId } })).status).to.equal(200);
    }
    const text = await exportText(ops(), ws.workspaceId);
    await ops().erasures.run((await ops().erasures.request({ userId: erased, workspaceId: ws.workspaceId })).jobId);
    return { ws, erased, kept, text };
  }

  it('workspace import skips the erased player and counts it, in every mode', async () => {
    const { ws, erased, text } = await erasedAfterExport();
    for (const mode of ['skip', 'overwrite', 'fail'] as const) {
      if (mode === 'fail') {
        for (const userId of [erased + 1, erased + 2]) await ops().deletePlayerData(ws.workspaceId, userId);
        await h.redis.del(...(await keysOfPlayer(h.redis, ws.workspaceId, erased + 1)), ...(await keysOfPlayer(h.redis, ws.workspaceId, erased + 2)));
      }
      const summary = await ops().importWorkspace(ws.workspaceId, { stream: Readable.from([text]) }, { mode });
      expect(summary.erased, mode).to.equal(1);
      expect(summary.failed, mode).to.equal(0);
      expect(await keysOfPlayer(h.redis, ws.workspaceId, erased), mode).to.deep.equal([]);
    }
    const read = await call(h.service, 'GET', `/data?userId=${erased + 2}`, { key: ws.apiKey });
    expect(read.body.data).to.deep.equal({ coins: erased + 2 });
  });

  it('leaves the erased player off the leaderboards it imports, followed boards included, in skip (board deleted) and overwrite modes', async () => {
    const ws = await ops().createWorkspace({ name: 'backup-erase-boards', plan: 'pro' });
    const erased = freshUserId();
    const kept = erased + 1;
    const board = (name: string, userId: number, score: number) =>
      call(h.service, 'POST', `/leaderboards/${name}/set`, { key: ws.apiKey, body: { userId, score } });
    await ops().leaderboards.follow(ws.workspaceId, 'levels', 'level');
    for (const [userId, score] of [[erased, 900], [kept, 100]] as const) {
      expect((await board('wins', userId, score)).status).to.equal(200);
      expect((await call(h.service, 'POST', '/data/set', { key: ws.apiKey, body: { userId, key: 'level', value: score } })).status).to.equal(200);
    }
    const entriesOf = async (name: string) => (await ops().leaderboards.page(ws.workspaceId, name)).entries.map((e) => e.userId);
    expect(await entriesOf('levels')).to.deep.equal([String(erased), String(kept)]);
    const text = await exportText(ops(), ws.workspaceId);
    await ops().erasures.run((await ops().erasures.request({ userId: erased, workspaceId: ws.workspaceId })).jobId);
    expect(await entriesOf('wins')).to.deep.equal([String(kept)]);

    // Skip: the boards deleted since the export are loaded again, without the erased player.
    await ops().leaderboards.delete(ws.workspaceId, 'wins');
    await ops().leaderboards.delete(ws.workspaceId, 'levels');
    const skipped = await ops().importWorkspace(ws.workspaceId, { stream: Readable.from([text]) }, { mode: 'skip' });
    expect(skipped.erased).to.equal(1);
    expect(skipped.boards).to.deep.include({ imported: 2, entries: 2, erased: 2 });
    expect(importHuman(skipped)).to.include('2 entries loaded, 2 left out (their players were erased)');
    for (const name of ['wins', 'levels']) expect(await entriesOf(name), name).to.deep.equal([String(kept)]);
    // Overwrite: the existing boards are replaced, still without the erased player.
    const overwritten = await ops().importWorkspace(ws.workspaceId, { stream: Readable.from([text]) }, { mode: 'overwrite' });
    expect(overwritten.boards).to.deep.include({ replaced: 2, entries: 2, erased: 2 });
    for (const name of ['wins', 'levels']) expect(await entriesOf(name), name).to.deep.equal([String(kept)]);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, erased)).to.deep.equal([]);
  });

  it('over the admin API, the summary says how many were erased', async () => {
    const { ws, erased, text } = await erasedAfterExport();
    const res = await fetchRecorded(
      `${h.service.opsUrl}/admin/v1/workspaces/${ws.workspaceId}/import?mode=overwrite`,
      'POST',
      { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      text,
    );
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data.erased).to.equal(1);
    expect(await keysOfPlayer(h.redis, ws.workspaceId, erased)).to.deep.equal([]);
  });

  it('the CLI refuses an import into a workspace with erasures without ERASURE_DIGEST_SECRET, and reports the erased with it', async () => {
    const { ws, erased, text } = await erasedAfterExport();
    const dir = mkdtempSync(join(tmpdir(), 'pds-erasure-import-'));
    try {
      const file = join(dir, 'players.ndjson');
      writeFileSync(file, text);
      const refused = await cli(['workspace', 'import', ws.workspaceId, '--in', file, '--json']);
      expect(refused.code).to.equal(2);
      expect(JSON.parse(refused.stderr.trim().split('\n').at(-1)!).code).to.equal('ERASURE_NOT_CONFIGURED');
      expect(await keysOfPlayer(h.redis, ws.workspaceId, erased)).to.deep.equal([]);
      const human = await cli(['workspace', 'import', ws.workspaceId, '--in', file, '--mode', 'overwrite'], { ERASURE_DIGEST_SECRET: DIGEST_SECRET });
      expect(human.code, human.stderr).to.equal(0);
      expect(human.stdout).to.include('1 erased (not imported: erased since the export)');
      // A workspace without erasures imports without any secret.
      const other = await ops().createWorkspace({ name: 'no-erasures', plan: 'pro' });
      const plain = oneJsonLine(await cli(['workspace', 'import', other.workspaceId, '--in', file, '--json']));
      expect(plain).to.deep.include({ imported: 3, erased: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a whole-installation backup taken before an erasure', function () {
  this.timeout(60_000);
  let local: LocalRedis;
  let redis: Redis;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-erasure-backup-'));
    local = await startLocalRedis({ dataDir: join(dir, 'redis') });
    redis = testRedis(local.url);
  });
  after(async () => {
    redis?.disconnect();
    await local?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('import --all skips the erased player and reports how many', async () => {
    const env = { REDIS_URL: local.url, ...ERASURE_ENV };
    const ops = new AdminOperations(redis, { actor: 'test', config: testConfig(env) });
    const ws = await ops.createWorkspace({ name: 'installation', plan: 'pro' });
    const erased = freshUserId();
    for (const userId of [erased, erased + 1]) await ops.setPlayerValue(ws.workspaceId, userId, 'coins', 7);
    const backup = join(dir, 'backup');
    expect((await cli(['export', '--all', '--out', backup, '--json'], env)).code).to.equal(0);
    const job = oneJsonLine(await cli(['player', 'erase', String(erased), '--workspace', ws.workspaceId, '--yes', '--json'], env));
    expect(job.state).to.equal('done');
    const restored = await cli(['import', '--all', '--in', backup, '--mode', 'overwrite'], env);
    expect(restored.code, restored.stderr).to.equal(0);
    expect(restored.stdout).to.include('1 players not imported because they were erased since the backup');
    expect(await keysOfPlayer(redis, ws.workspaceId, erased)).to.deep.equal([]);
    expect(await keysOfPlayer(redis, ws.workspaceId, erased + 1)).to.have.length.greaterThan(0);
    const json = oneJsonLine(await cli(['import', '--all', '--in', backup, '--json'], env));
    expect(json.players.map((s: { erased: number }) => s.erased)).to.deep.equal([1]);
  });
});
