// `player history`, `player show --version` and `player restore`, run as an operator would
// (a child process against the test Redis), history turned on in the environment.
import { userInfo } from 'node:os';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { cli as runCli, oneJsonLine } from '../support/cli.js';
import { testOps } from '../support/admin.js';
import { testConfig, testRedis } from '../support/service.js';

const HISTORY = { HISTORY_MAX_VERSIONS: '50' };
const cli = (...args: string[]) => runCli(args, HISTORY);
/** Each reading is one restore interval (HISTORY_INTERVAL_SECONDS) later: every write opens a restore point. */
function intervalClock(): () => number {
  let at = Date.now() - 3_600_000;
  return () => (at += 300_000);
}

describe('admin CLI: player history and restore', function () {
  // Each run starts Node and compiles TypeScript on the fly: seconds on a busy machine.
  this.timeout(120_000);
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('lists versions, shows one, and restores it only with --yes', async () => {
    const ops = testOps(redis, { config: testConfig(HISTORY), clock: intervalClock() });
    const { workspaceId: ws } = await ops.createWorkspace({ name: 'CLI history' });
    await ops.setPlayerValue(ws, 5, 'coins', 100);
    await ops.setPlayerValue(ws, 5, 'level', 2);
    await ops.setPlayerValue(ws, 5, 'coins', 0);

    const history = oneJsonLine(await cli('player', 'history', '--workspace', ws, '--user', '5', '--json'));
    expect(history.version).to.equal(3);
    expect(history.versions.map((v: { version: number }) => v.version)).to.deep.equal([3, 2, 1, 0]);
    expect(history.versions[0]).to.include({ version: 3, kind: null });
    expect(history.versions[1]).to.include({ kind: 'admin-set', by: 'admin:test' });

    const text = await cli('player', 'history', '--workspace', ws, '--user', '5', '--limit', '2');
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.match(/^player 5: version 3\nVERSION\s+TIME\s+KIND\s+BY\s+KEYS\n3 .*\(current\)/);
    expect(text.stdout).to.include('admin:test');
    expect(text.stdout).to.include('more: --before 2');
    const older = await cli('player', 'history', '--workspace', ws, '--user', '5', '--before', '2');
    // Version 0 is the point before the player's first write, shown with that write's time and writer.
    expect(older.stdout).to.match(/\n1 +\d{4}-.*admin-set +admin:test +level/);
    expect(older.stdout).to.match(/\n0 +\d{4}-.*admin-set +admin:test +coins/);

    const shown = oneJsonLine(await cli('player', 'show', '--workspace', ws, '--user', '5', '--version', '1', '--json'));
    expect(shown).to.include({ version: 1, currentVersion: 3 });
    expect(shown.data.coins.value).to.equal(100);
    expect(shown.data).to.have.keys(['coins']);
    const current = oneJsonLine(await cli('player', 'show', '--workspace', ws, '--user', '5', '--json'));
    expect(current.data.coins.value).to.equal(0);

    const unconfirmed = await cli('player', 'restore', '--workspace', ws, '--user', '5', '--version', '2');
    expect(unconfirmed.code).to.equal(2);
    expect(unconfirmed.stdout).to.equal('');
    expect(unconfirmed.stderr).to.match(/--yes/);
    expect((await ops.playerSession(ws, 5)).version).to.equal(3);

    const restored = oneJsonLine(await cli('player', 'restore', '--workspace', ws, '--user', '5', '--version', '2', '--yes', '--json'));
    expect(restored).to.deep.equal({ userId: '5', restoredFrom: 2, version: 4, set: 1, deleted: 0, endedSession: null });
    const audit = await ops.readAudit({ workspaceId: ws, limit: 1 });
    expect((await ops.getPlayerValue(ws, 5, 'coins')).value).to.equal(100);
    expect(audit[0]).to.include({ action: 'player.restore', actor: `cli:${userInfo().username}` });

    const missing = await cli('player', 'show', '--workspace', ws, '--user', '5', '--version', '99', '--json');
    expect(missing.code).to.equal(2);
    expect(JSON.parse(missing.stderr)).to.include({ code: 'VERSION_NOT_RETAINED' });
  });

  it('refuses a restore under a live session unless --force, which ends it', async () => {
    const ops = testOps(redis, { config: testConfig(HISTORY), clock: intervalClock() });
    const { workspaceId: ws } = await ops.createWorkspace({ name: 'CLI restore under session' });
    await ops.setPlayerValue(ws, 6, 'coins', 1);
    await ops.setPlayerValue(ws, 6, 'coins', 2);
    await ops.players.session(ws, '6', { action: 'acquire', sessionId: 'ses_cli_history_test', owner: 'job-7', ttlMs: 60_000 });

    const refused = await cli('player', 'restore', '--workspace', ws, '--user', '6', '--version', '1', '--yes');
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/job-7.*--force|job-7.*force/);
    expect((await ops.getPlayerValue(ws, 6, 'coins')).value).to.equal(2);

    const forced = await cli('player', 'restore', '--workspace', ws, '--user', '6', '--version', '1', '--yes', '--force');
    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stdout).to.match(/restored player 6 to version 1 as version 3 .*ended the session of job-7/);
    expect((await ops.playerSession(ws, 6)).session).to.equal(null);
    expect((await ops.getPlayerValue(ws, 6, 'coins')).value).to.equal(1);
  });
});
