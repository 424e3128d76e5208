// A whole-installation backup carries each workspace's erasure player names (Player_{userId})
// and the games it serves, so that erasures keep reaching a restored workspace's players: into an
// empty Redis they come back as they were, and a second restore changes nothing; a workspace
// restored under a new id gets them under that id; a game another workspace serves here stays
// with it and is reported; a backup written before they were carried still restores; a bad
// template in the backup refuses the restore before anything is written.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { AdminOperations } from '../../src/admin/operations.js';
import { startLocalRedis, type LocalRedis } from '../../src/dev/local-redis.js';
import { keys } from '../../src/store/keys.js';
import { connectRedis, createRedis, type RedisClient } from '../../src/store/redis/redis.js';
import { cli } from '../support/cli.js';

interface Line {
  id: string;
  fields: Record<string, string>;
  erasurePlayers?: string[];
  games?: string[];
}

const readLines = (folder: string): Line[] =>
  readFileSync(join(folder, 'workspaces.ndjson'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

/** Rewrites workspaces.ndjson of a copied backup, with a manifest that matches it again. */
function rewriteWorkspaces(folder: string, lines: Line[], counts?: (c: Record<string, number>) => void): void {
  const text = lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  writeFileSync(join(folder, 'workspaces.ndjson'), text);
  const manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8'));
  const file = manifest.files.find((f: { name: string }) => f.name === 'workspaces.ndjson');
  Object.assign(file, { bytes: Buffer.byteLength(text), lines: lines.length, sha256: createHash('sha256').update(text).digest('hex') });
  counts?.(manifest.counts);
  writeFileSync(join(folder, 'manifest.json'), JSON.stringify(manifest, null, 2));
}

describe('export --all and import --all: erasure player names and games', function () {
  this.timeout(120_000);
  let dir: string;
  let backup: string;
  let alpha: string;
  let beta: string;
  let gamma: string;
  const opsOn = (redis: RedisClient) => new AdminOperations(redis, { actor: 'test' });
  let target: LocalRedis;
  let redis: RedisClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pds-backup-erasure-config-'));
    const source = await startLocalRedis({ dataDir: join(dir, 'source') });
    const redis = createRedis({ url: source.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    try {
      await connectRedis(redis, 5000);
      const ops = opsOn(redis);
      alpha = (await ops.createWorkspace({ name: 'alpha', plan: 'pro' })).workspaceId;
      beta = (await ops.createWorkspace({ name: 'beta', plan: 'free' })).workspaceId;
      gamma = (await ops.createWorkspace({ name: 'gamma', plan: 'free' })).workspaceId;
      await ops.erasures.setErasurePlayers(alpha, ['Player_{userId}', 'save.{userId}.main']);
      await ops.erasures.setGames(alpha, ['100', '200']);
      await ops.erasures.setGames(beta, ['300']);
      await ops.setPlayerValue(alpha, 'Player_42', 'coins', 1);
      backup = join(dir, 'backup');
      const manifest = await ops.exportInstallation(backup);
      expect(manifest.counts).to.deep.include({ workspaces: 3, erasurePlayers: 2, games: 3, players: 1 });
    } finally {
      redis.disconnect();
      await source.stop();
    }
    const lines = readLines(backup);
    expect(lines.find((l) => l.id === alpha)).to.deep.include({ erasurePlayers: ['Player_{userId}', 'save.{userId}.main'], games: ['100', '200'] });
    expect(lines.find((l) => l.id === beta)).to.deep.include({ games: ['300'] }).and.not.have.property('erasurePlayers');
    expect(lines.find((l) => l.id === gamma)).to.not.have.any.keys('erasurePlayers', 'games');
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  beforeEach(async () => {
    target = await startLocalRedis({ dataDir: join(dir, `target-${Math.random().toString(36).slice(2)}`) });
    redis = createRedis({ url: target.url, commandTimeoutMs: 5000, connectTimeoutMs: 5000 });
    await connectRedis(redis, 5000);
  });
  afterEach(async () => {
    redis.disconnect();
    await target.stop();
  });

  /** The games map and every workspace's names, as Redis holds them. */
  async function state(): Promise<unknown> {
    const names: Record<string, string | null> = {};
    for (const id of (await redis.smembers(keys.workspaceIndex())).sort()) names[id] = await redis.get(keys.erasurePlayerNames(id));
    return { games: await redis.hgetall(keys.games()), names };
  }

  it('into an empty Redis: names and games come back under their workspaces, and a second restore changes nothing', async () => {
    const ops = opsOn(redis);
    const result = await ops.importInstallation(backup);
    expect(result).to.deep.include({ erasurePlayers: { created: 1, existing: 0 }, games: { created: 3, existing: 0 }, gamesServedElsewhere: [] });
    expect((await ops.erasures.erasurePlayersOf(alpha)).templates).to.deep.equal(['Player_{userId}', 'save.{userId}.main']);
    expect((await ops.erasures.erasurePlayersOf(beta)).templates).to.deep.equal([]);
    expect((await ops.erasures.gamesOf(alpha)).gameIds).to.deep.equal(['100', '200']);
    expect((await ops.erasures.gamesOf(beta)).gameIds).to.deep.equal(['300']);
    expect((await ops.erasures.gamesOf(gamma)).gameIds).to.deep.equal([]);
    const before = await state();
    const audits = await redis.llen(keys.auditLog());
    const again = await ops.importInstallation(backup);
    expect(again).to.deep.include({ erasurePlayers: { created: 0, existing: 1 }, games: { created: 0, existing: 3 }, gamesServedElsewhere: [] });
    expect(await state()).to.deep.equal(before);
    // The restore's own entries only: no set-games nor set-erasure-players written again.
    const added = await redis.lrange(keys.auditLog(), 0, (await redis.llen(keys.auditLog())) - audits - 1);
    const actions = added.map((e) => (JSON.parse(e) as { action: string }).action);
    expect(actions).to.include('installation.import');
    expect(actions.filter((a) => a.startsWith('workspace.set-'))).to.deep.equal([]);
  });

  it('a workspace restored under a new id gets its names and games under that id; a game the other studio serves stays with it, reported', async () => {
    const ops = opsOn(redis);
    await ops.createWorkspace({ id: alpha, name: 'another studio' });
    await ops.erasures.setGames(alpha, ['100']);
    const result = await ops.importInstallation(backup, { onCollision: 'rename' });
    const to = result.renamed[0]!.to;
    expect(to).to.not.equal(alpha);
    expect(result.gamesServedElsewhere).to.deep.equal([{ gameId: '100', workspaceId: to, servedBy: alpha }]);
    expect(result.games).to.deep.equal({ created: 2, existing: 0 });
    expect((await ops.erasures.erasurePlayersOf(to)).templates).to.deep.equal(['Player_{userId}', 'save.{userId}.main']);
    expect((await ops.erasures.gamesOf(to)).gameIds).to.deep.equal(['200']);
    // The other studio keeps its game, and gets none of the backup's names.
    expect((await ops.erasures.gamesOf(alpha)).gameIds).to.deep.equal(['100']);
    expect((await ops.erasures.erasurePlayersOf(alpha)).templates).to.deep.equal([]);
    const before = await state();
    const again = await ops.importInstallation(backup, { onCollision: 'rename' });
    expect(again.gamesServedElsewhere).to.deep.equal(result.gamesServedElsewhere);
    expect(again).to.deep.include({ erasurePlayers: { created: 0, existing: 1 }, games: { created: 0, existing: 2 } });
    expect(await state()).to.deep.equal(before);
  });

  it('a game another workspace serves here is not taken from it: the restore says so, on the command line too', async () => {
    const ops = opsOn(redis);
    const other = (await ops.createWorkspace({ name: 'other studio' })).workspaceId;
    await ops.erasures.setGames(other, ['300', '999']);
    const restored = await cli(['import', '--all', '--in', backup], { REDIS_URL: target.url });
    expect(restored.code, restored.stderr).to.equal(0);
    expect(restored.stdout).to.include(`game 300 not mapped to workspace ${beta}: workspace ${other} serves it here (kept;`);
    expect(restored.stdout).to.include('games 2 new, 0 existing; erasure player names of 1 workspaces new, 0 existing');
    expect((await ops.erasures.gamesOf(other)).gameIds).to.deep.equal(['300', '999']);
    expect((await ops.erasures.gamesOf(beta)).gameIds).to.deep.equal([]);
    expect((await ops.erasures.gamesOf(alpha)).gameIds).to.deep.equal(['100', '200']);
    const again = await ops.importInstallation(backup);
    expect(again.gamesServedElsewhere).to.deep.equal([{ gameId: '300', workspaceId: beta, servedBy: other }]);
    expect(again.games).to.deep.equal({ created: 0, existing: 2 });
  });

  it('the workspace here keeps the games it serves since the backup, and gains the backup\'s', async () => {
    const ops = opsOn(redis);
    await ops.importInstallation(backup);
    await ops.erasures.setGames(beta, ['400']);
    const result = await ops.importInstallation(backup);
    expect(result.games).to.deep.equal({ created: 1, existing: 2 });
    expect((await ops.erasures.gamesOf(beta)).gameIds).to.deep.equal(['300', '400']);
  });

  it('a backup written before names and games were carried still restores, without them', async () => {
    const old = join(dir, `old-${Math.random().toString(36).slice(2)}`);
    cpSync(backup, old, { recursive: true });
    rewriteWorkspaces(old, readLines(backup).map(({ id, fields }) => ({ id, fields })), (counts) => {
      delete counts['erasurePlayers'];
      delete counts['games'];
    });
    const ops = opsOn(redis);
    const result = await ops.importInstallation(old);
    expect(result).to.deep.include({ workspaces: { created: 3, existing: 0 }, erasurePlayers: { created: 0, existing: 0 }, games: { created: 0, existing: 0 } });
    expect(result.players.find((p) => p.workspaceId === alpha)?.imported).to.equal(1);
    expect(await redis.hgetall(keys.games())).to.deep.equal({});
    expect((await ops.erasures.erasurePlayersOf(alpha)).templates).to.deep.equal([]);
  });

  it('refuses a backup whose names or games the admin ops would refuse, before writing anything', async () => {
    for (const [what, change] of [
      ['erasure player name "Player_{userId}_{userId}" must hold {userId} exactly once', (l: Line) => (l.erasurePlayers = ['Player_{userId}_{userId}'])],
      ['Game id must be a positive whole number', (l: Line) => (l.games = ['0'])],
      ['game 300 is served by two workspaces', (l: Line) => (l.games = ['300'])],
    ] as const) {
      const bad = join(dir, `bad-${Math.random().toString(36).slice(2)}`);
      cpSync(backup, bad, { recursive: true });
      const lines = readLines(backup);
      change(lines.find((l) => l.id === alpha)!);
      rewriteWorkspaces(bad, lines);
      let refused: unknown;
      await opsOn(redis).importInstallation(bad).catch((err: unknown) => (refused = err));
      expect(refused, what).to.have.property('code', 'INVALID_REQUEST');
      expect((refused as Error).message, what).to.match(/nothing written/).and.include(what.replace(/^erasure/, 'Erasure'));
      expect(await redis.dbsize(), what).to.equal(0);
    }
  });
});
