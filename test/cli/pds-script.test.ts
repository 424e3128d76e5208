// `./pds`, the CLI from a checkout without npm's banner: stdout carries the command's output
// only (so `./pds player export ... > file` is a JSON file), and the `pds: Redis at ...` line
// comes first, on stderr, before any output.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { testConfig } from '../support/service.js';
import { testOps } from '../support/admin.js';
import { testRedis } from '../support/service.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs ./pds through a shell with stderr merged into stdout (2>&1), as a terminal shows them, and stdout alone. */
function pds(args: string, merged: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sh', ['-c', `./pds ${args}${merged ? ' 2>&1' : ' 2>/dev/null'}`], { cwd: ROOT, env: { ...process.env, REDIS_URL: testConfig().redisUrl! } }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

describe('./pds', function () {
  this.timeout(30_000);

  it("writes the export alone on stdout, and the Redis line first on stderr", async () => {
    const redis = testRedis();
    try {
      const ops = testOps(redis);
      const ws = await ops.createWorkspace({ name: 'pds script' });
      await ops.setPlayerValue(ws.workspaceId, 'u1', 'coins', 5);
      const exported = await pds(`player export --workspace ${ws.workspaceId} --user u1`, false);
      expect(JSON.parse(exported)).to.deep.include({ workspaceId: ws.workspaceId, userId: 'u1' });
      const both = await pds(`player show --workspace ${ws.workspaceId} --user u1`, true);
      const lines = both.split('\n');
      expect(lines[0]).to.match(/^pds: Redis at 127\.0\.0\.1:\d+$/);
      expect(lines[1]).to.equal('player u1 (version 1): 1 key(s)');
      expect(lines[2]).to.match(/^KEY +UPDATED_AT +VALUE$/);
      expect(lines[3]).to.match(/^coins +\d{4}-\d\d-\d\dT\S+ +5$/);
    } finally {
      redis.disconnect();
    }
  });
});
