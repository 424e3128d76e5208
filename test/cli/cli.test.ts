// The admin command line, run as a child process against the test Redis, as an operator would.
import { userInfo } from 'node:os';
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { cli as runCli, oneJsonLine } from '../support/cli.js';
import { testOps } from '../support/admin.js';
import { testRedis } from '../support/service.js';
import { testRedisUrl } from '../support/hooks.js';
import { loadConfig } from '../../src/config.js';
import { redisNotice } from '../../src/cli/runtime.js';

const cli = (...args: (string | Record<string, string>)[]) => {
  const env = typeof args.at(-1) === 'object' ? (args.pop() as Record<string, string>) : {};
  return runCli(args as string[], env);
};

describe('admin CLI', function () {
  // Each run starts Node and compiles TypeScript on the fly: seconds on a busy machine.
  this.timeout(120_000);
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('walks a workspace through its whole life', async () => {
    const created = oneJsonLine(await cli('workspace', 'create', '--name', 'CLI Studio', '--json'));
    expect(created).to.include({ name: 'CLI Studio', plan: 'free' });
    const ws: string = created.workspaceId;

    const key = oneJsonLine(
      await cli('key', 'create', '--workspace', ws, '--scope', 'read', '--label', 'eu-1', '--expires-in', '7d', '--json'),
    );
    expect(key).to.include({ scope: 'read', label: 'eu-1', workspaceId: ws });

    const listed = oneJsonLine(await cli('key', 'list', '--workspace', ws, '--json'));
    expect(listed.map((k: { keyId: string }) => k.keyId).sort()).to.deep.equal([created.keyId, key.keyId].sort());
    expect(JSON.stringify(listed)).not.to.include(key.apiKey);
    expect(listed[0]).to.have.keys(['keyId', 'workspaceId', 'prefix', 'label', 'scope', 'status', 'createdAt', 'expiresAt', 'lastUsedAt', 'dev']);

    expect(oneJsonLine(await cli('workspace', 'set-plan', ws, 'pro', '--json')).plan).to.equal('pro');
    expect(oneJsonLine(await cli('workspace', 'rename', ws, '--name', 'Renamed', '--json')).name).to.equal('Renamed');

    const rotated = oneJsonLine(await cli('key', 'rotate', created.keyId, '--grace', '1h', '--yes', '--json'));
    expect(rotated.previous).to.include({ keyId: created.keyId, status: 'active' });
    expect(rotated.key.apiKey).to.match(/^pds_/);

    const set = oneJsonLine(await cli('player', 'set', '--workspace', ws, '--user', '42', '--key', 'inv', '--value', '["sword",{"gold":3}]', '--yes', '--json'));
    expect(set.value).to.deep.equal(['sword', { gold: 3 }]);
    const exported = oneJsonLine(await cli('player', 'export', '--workspace', ws, '--user', '42', '--json'));
    expect(exported.data.inv.value).to.deep.equal(['sword', { gold: 3 }]);

    // Two reads, side by side (each command is a process of its own, most of its time tsx starting).
    const [usageRun, auditRun] = await Promise.all([cli('usage', '--workspace', ws, '--json'), cli('audit', '--workspace', ws, '--json')]);
    const usage = oneJsonLine(usageRun);
    expect(usage.players).to.equal(1);
    expect(usage.days).to.have.length(30);

    const audit = oneJsonLine(auditRun);
    expect(audit.map((e: { action: string }) => e.action)).to.include.members(['workspace.create', 'key.rotate', 'player.export']);
    expect(audit.every((e: { actor: string }) => e.actor === `cli:${userInfo().username}`)).to.equal(true);

    const deleted = oneJsonLine(await cli('workspace', 'delete', ws, '--yes', '--json'));
    expect(deleted).to.deep.equal({ workspaceId: ws, keysDeleted: 3, playersDeleted: 1 });
    expect(await redis.exists(`pds:ws:{${ws}}`)).to.equal(0);

    // Safe to re-run, as the docs say: the second run finds nothing and says so, exit 0.
    expect(oneJsonLine(await cli('workspace', 'delete', ws, '--yes', '--json'))).to.deep.equal({
      workspaceId: ws,
      keysDeleted: 0,
      playersDeleted: 0,
      alreadyGone: true,
    });
    const again = await cli('workspace', 'delete', ws, '--yes');
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.equal(`workspace ${ws} is already gone (deleted earlier, or never existed): nothing to delete\n`);
  });

  it('destructive commands do nothing without --yes, and say so on stderr with a non-zero exit', async () => {
    const ops = testOps(redis);
    const ws = await ops.createWorkspace({ name: 'Guarded' });
    await ops.setPlayerValue(ws.workspaceId, 1, 'coins', 5);
    const commands = [
      ['workspace', 'delete', ws.workspaceId],
      ['key', 'revoke', ws.keyId, '--json'],
      ['key', 'rotate', ws.keyId],
      ['player', 'delete', '--workspace', ws.workspaceId, '--user', '1'],
      ['player', 'set', '--workspace', ws.workspaceId, '--user', '1', '--key', 'coins', '--value', '9'],
    ];
    // Side by side: each is a process of its own, and none may change anything.
    const results = await Promise.all(commands.map((args) => cli(...args)));
    for (const [i, args] of commands.entries()) {
      const result = results[i]!;
      expect(result.code, args.join(' ')).to.equal(2);
      expect(result.stdout).to.equal('');
      expect(result.stderr).to.match(/--yes/);
    }
    expect((await ops.listKeys(ws.workspaceId))[0]!.status).to.equal('active');
    expect((await ops.getPlayerValue(ws.workspaceId, 1, 'coins')).value).to.equal(5);
  });

  it('errors go to stderr (as JSON with --json) with a non-zero exit; text output is readable', async () => {
    const [missing, badValue] = await Promise.all([
      cli('workspace', 'show', 'ws_does_not_exist', '--json'),
      cli('player', 'set', '--workspace', 'ws_x', '--user', '1', '--key', 'k', '--value', '{oops', '--yes'),
    ]);
    expect(missing.code).to.equal(2);
    expect(missing.stdout).to.equal('');
    expect(JSON.parse(missing.stderr)).to.deep.equal({ success: false, error: 'Workspace ws_does_not_exist not found', code: 'NOT_FOUND' });

    expect(badValue.code).to.equal(2);
    expect(badValue.stderr).to.match(/^error: .*JSON/);

    const ws = await testOps(redis).createWorkspace({ name: 'Readable' });
    const list = await cli('key', 'list', '--workspace', ws.workspaceId);
    expect(list.code).to.equal(0);
    expect(list.stdout).to.match(/^KEY ID +PREFIX +SCOPE +STATUS +CREATED +LAST USED +EXPIRES +LABEL\n/);
    expect(list.stdout).to.include(ws.keyId);
    expect(list.stdout).not.to.include(ws.apiKey);

    const shown = await cli('workspace', 'show', ws.workspaceId);
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stdout).to.include(`workspace ${ws.workspaceId} "Readable"`);
    expect(shown.stdout).to.match(/\nKEY ID +PREFIX +SCOPE +STATUS +CREATED +LAST USED +EXPIRES +LABEL\n/);
    const keyRow = shown.stdout.split('\n').find((line) => line.startsWith(ws.keyId));
    expect(keyRow, shown.stdout).to.match(/ active +\S+ +never +never/);
    expect(shown.stdout).not.to.include(ws.apiKey);
  });

  it('says on stderr which Redis it uses (host:port, never the password; not with --json) and fails clearly when it is down', async () => {
    const ws = await testOps(redis).createWorkspace({ name: 'Where' });
    const ok = await cli('workspace', 'show', ws.workspaceId);
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stderr).to.equal(`pds: Redis at ${new URL(testRedisUrl()).host}\n`);
    // With --json, stderr stays for the one JSON error line of a failure.
    const quiet = await cli('workspace', 'show', ws.workspaceId, '--json');
    expect(quiet.stderr).to.equal('');

    const down = await cli('workspace', 'list', { REDIS_URL: 'redis://admin:hunter2-secret@127.0.0.1:1' });
    expect(down.code).to.equal(1);
    expect(down.stdout).to.equal('');
    // Its own message only: no "[ioredis] Unhandled error event" before it, and no password.
    expect(down.stderr).to.match(
      /^pds: Redis at 127\.0\.0\.1:1\nerror: Cannot reach Redis at 127\.0\.0\.1:1 \(set REDIS_URL or REDIS_CLUSTER_NODES\): connect ECONNREFUSED 127\.0\.0\.1:1\n$/,
    );
    const downJson = await cli('workspace', 'list', '--json', { REDIS_URL: 'redis://admin:hunter2-secret@127.0.0.1:1' });
    expect(JSON.parse(downJson.stderr).error).to.match(/^Cannot reach Redis at 127\.0\.0\.1:1 .*ECONNREFUSED/);
    expect(down.stderr + downJson.stderr).not.to.include('hunter2');
  });

  it('warns when REDIS_URL is unset and it falls back to the default Redis', () => {
    expect(redisNotice(loadConfig({}))).to.equal(
      "pds: warning: REDIS_URL is not set, so using the default Redis at 127.0.0.1:6379; set REDIS_URL=redis://host:port to choose the service's Redis\n",
    );
    expect(redisNotice(loadConfig({ REDIS_URL: 'rediss://u:pw@cache.example:6380/2' }))).to.equal('pds: Redis at cache.example:6380\n');
    expect(redisNotice(loadConfig({ REDIS_CLUSTER_NODES: 'a:7000,b:7001' }))).to.equal('pds: Redis at cluster a:7000,b:7001\n');
  });
});
