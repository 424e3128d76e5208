// `player message`, `player messages` and `player delete-messages`, run as an operator would
// (a child process against the test Redis).
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { cli as runCli, oneJsonLine } from '../support/cli.js';
import { testOps } from '../support/admin.js';
import { testRedis } from '../support/service.js';

const cli = (...args: string[]) => runCli(args);

describe('admin CLI: player messages', function () {
  // Each run starts Node and compiles TypeScript on the fly: seconds on a busy machine.
  this.timeout(120_000);
  let redis: Redis;
  before(() => {
    redis = testRedis();
  });
  after(() => redis.disconnect());

  it('leaves a message, lists it, and deletes it only with --yes', async () => {
    const { workspaceId: ws } = await testOps(redis).createWorkspace({ name: 'CLI messages' });
    const target = ['--workspace', ws, '--user', '9'];
    const sent = oneJsonLine(await cli('player', 'message', ...target, '--message', '{"gift":"sword"}', '--ttl', '3600', '--json'));
    expect(sent.messageId).to.match(/^msg_\d{19}$/);
    const text = await cli('player', 'messages', ...target);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.match(/^1 message\(s\) wait for player 9\nID\s+SENT\s+EXPIRES\s+MESSAGE\nmsg_\d{19} .*\{"gift":"sword"\}/);
    const badJson = await cli('player', 'message', ...target, '--message', '{gift}');
    expect(badJson.code).to.equal(2);
    const unconfirmed = await cli('player', 'delete-messages', ...target);
    expect(unconfirmed.code).to.equal(2);
    expect(unconfirmed.stderr).to.match(/--yes/);
    const deleted = oneJsonLine(await cli('player', 'delete-messages', ...target, '--id', sent.messageId, '--yes', '--json'));
    expect(deleted).to.deep.equal({ userId: '9', deleted: 1 });
    expect(oneJsonLine(await cli('player', 'messages', ...target, '--json')).messages).to.deep.equal([]);
  });
});
