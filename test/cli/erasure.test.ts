// `pds player erase`, `pds erasure list|show|dismiss`, `pds workspace set-games|games` and
// `pds workspace set-erasure-players|erasure-players`, run as
// an operator runs them, against the test Redis.
import { expect } from 'chai';
import { testOps } from '../support/admin.js';
import { cli, oneJsonLine } from '../support/cli.js';
import { DIGEST_SECRET, ERASURE_ENV, freshGameId, freshUserId, keysOfPlayer } from '../support/erasure.js';
import { testConfig, testRedis } from '../support/service.js';
import type { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';

const env = { ERASURE_DIGEST_SECRET: DIGEST_SECRET };

describe('CLI: erasure', function () {
  this.timeout(60_000);
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());
  const ops = () => testOps(redis, { config: testConfig(ERASURE_ENV) });

  it('player erase: refuses without --yes or without exactly one of --workspace and --all-workspaces, touching nothing', async () => {
    const ws = await ops().createWorkspace({ name: 'cli-erase-refused' });
    const userId = freshUserId();
    await ops().setPlayerValue(ws.workspaceId, userId, 'coins', 1);
    for (const args of [
      ['player', 'erase', String(userId), '--workspace', ws.workspaceId],
      ['player', 'erase', String(userId), '--yes'],
      ['player', 'erase', String(userId), '--workspace', ws.workspaceId, '--all-workspaces', '--yes'],
    ]) {
      const result = await cli(args, env);
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stderr).to.match(/--yes|--workspace/);
    }
    const noSecret = await cli(['player', 'erase', String(userId), '--workspace', ws.workspaceId, '--yes']);
    expect(noSecret.code).to.equal(2);
    expect(noSecret.stderr).to.include('ERASURE_DIGEST_SECRET');
    expect(await keysOfPlayer(redis, ws.workspaceId, userId)).to.have.length.greaterThan(0);
  });

  it('player erase runs the job to done and prints it; erasure show and list find it by id and by user', async () => {
    const ws = await ops().createWorkspace({ name: 'cli-erase' });
    const userId = freshUserId();
    await ops().setPlayerValue(ws.workspaceId, userId, 'coins', 1);
    await ops().setPlayerValue(ws.workspaceId, userId, 'coins', 2);
    const human = await cli(['player', 'erase', String(userId), '--workspace', ws.workspaceId, '--yes'], env);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(/^erasure er_\S+: done \(workspace /);
    expect(human.stdout).to.not.include(String(userId));
    expect(await keysOfPlayer(redis, ws.workspaceId, userId)).to.deep.equal([]);
    const jobId = /erasure (er_\S+):/.exec(human.stdout)![1]!;
    const shown = oneJsonLine(await cli(['erasure', 'show', jobId, '--json'], env));
    expect(shown).to.deep.include({ jobId, state: 'done', source: 'cli', workspaces: [ws.workspaceId] });
    expect(shown.requestedBy).to.match(/^cli:/);
    const listed = oneJsonLine(await cli(['erasure', 'list', '--user', String(userId), '--json'], env));
    expect(listed.jobs.map((j: { jobId: string }) => j.jobId)).to.deep.equal([jobId]);
    const table = await cli(['erasure', 'list', '--limit', '5'], env);
    expect(table.stdout).to.match(/^erasures: \d+ requested, \d+ done; now \d+ pending, \d+ failed, \d+ unmapped/);
  });

  it('workspace set-games and games: maps games, refuses another workspace\'s game, clears with none', async () => {
    const [a, b] = [await ops().createWorkspace({ name: 'cli-games-a' }), await ops().createWorkspace({ name: 'cli-games-b' })];
    const [g1, g2] = [String(freshGameId()), String(freshGameId())];
    const set = oneJsonLine(await cli(['workspace', 'set-games', a.workspaceId, g1, g2, '--json']));
    expect(set.gameIds).to.have.members([g1, g2]);
    const clash = await cli(['workspace', 'set-games', b.workspaceId, g2]);
    expect(clash.code).to.equal(2);
    expect(clash.stderr).to.include(`served by workspace ${a.workspaceId}`);
    expect((await cli(['workspace', 'games', a.workspaceId])).stdout).to.include(`serves games ${[g1, g2].sort((x, y) => x.length - y.length || x.localeCompare(y)).join(', ')}`);
    expect(oneJsonLine(await cli(['workspace', 'set-games', a.workspaceId, '--json'])).gameIds).to.deep.equal([]);
    expect((await cli(['workspace', 'set-games', a.workspaceId, 'x1'])).code).to.equal(2);
  });

  it('workspace set-erasure-players and erasure-players: sets the templates, refuses a bad one, and player erase erases the players they name', async () => {
    const ws = await ops().createWorkspace({ name: 'cli-erasure-players' });
    const set = oneJsonLine(await cli(['workspace', 'set-erasure-players', ws.workspaceId, 'Player_{userId}', 'PlayerData_v2..Player_{userId}', '--json']));
    expect(set).to.deep.equal({ workspaceId: ws.workspaceId, templates: ['Player_{userId}', 'PlayerData_v2..Player_{userId}'] });
    const shown = await cli(['workspace', 'erasure-players', ws.workspaceId]);
    expect(shown.stdout).to.include(`in workspace ${ws.workspaceId}, an erasure of a user id erases the player {userId} and the players Player_{userId}, PlayerData_v2..Player_{userId}`);
    const refused = await cli(['workspace', 'set-erasure-players', ws.workspaceId, 'Player_{userId}', 'Player:{userId}']);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.include('A-Z a-z 0-9 _ . -');
    expect(oneJsonLine(await cli(['workspace', 'erasure-players', ws.workspaceId, '--json'])).templates).to.have.length(2);
    expect((await redis.lrange(keys.auditLog(), 0, 0))[0]).to.include('"action":"workspace.set-erasure-players"');

    const userId = freshUserId();
    const names = [String(userId), `Player_${userId}`, `PlayerData_v2..Player_${userId}`];
    for (const name of names) await ops().setPlayerValue(ws.workspaceId, name, 'Coins', 1);
    const erased = oneJsonLine(await cli(['player', 'erase', String(userId), '--workspace', ws.workspaceId, '--yes', '--json'], env));
    expect(erased.state).to.equal('done');
    expect(erased.progress.keysDeleted).to.be.at.least(3);
    for (const name of names) expect(await keysOfPlayer(redis, ws.workspaceId, name), name).to.deep.equal([]);

    expect((await cli(['workspace', 'set-erasure-players', ws.workspaceId])).stdout).to.include('erases the player {userId} only');
    expect(oneJsonLine(await cli(['workspace', 'erasure-players', ws.workspaceId, '--json'])).templates).to.deep.equal([]);
  });
});
