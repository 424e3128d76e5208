// deploy/haproxy/haproxy.cfg passes HAProxy's own check (`haproxy -c`), with its defaults and with
// addresses given through its environment variables as test-long/fleet.test.ts gives them; a
// broken copy is refused, so the check can fail. (The fleet test runs the file for real.)
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const CFG = 'deploy/haproxy/haproxy.cfg';

async function check(file: string, env: Record<string, string>): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('haproxy', ['-c', '-f', file], { env: { ...process.env, ...env } });
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('deploy/haproxy/haproxy.cfg', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'pds-haproxy-check-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is valid for haproxy, with its defaults and with addresses from the environment', async () => {
    const socket = { HAPROXY_STATS_SOCKET: join(dir, 'admin.sock') };
    const defaults = await check(CFG, socket);
    expect(defaults.ok, defaults.output).to.equal(true);
    expect(defaults.output).to.not.match(/WARNING/);
    const filled = await check(CFG, { ...socket, PDS_BIND: '127.0.0.1:18080', PDS_1: '127.0.0.1:18081', PDS_1_OPS: '18082' });
    expect(filled.ok, filled.output).to.equal(true);
  });

  it('is refused when broken (the check can fail)', async () => {
    const broken = join(dir, 'broken.cfg');
    writeFileSync(broken, readFileSync(CFG, 'utf8').replace('retry-on conn-failure empty-response', 'retry-on conn-failure not-a-retry-event'));
    const result = await check(broken, { HAPROXY_STATS_SOCKET: join(dir, 'admin.sock') });
    expect(result.ok).to.equal(false);
    expect(result.output).to.match(/not-a-retry-event/);
  });

  it('checks /readyz on the ops port and retries only what is safe to send again', () => {
    const cfg = readFileSync(CFG, 'utf8');
    expect(cfg).to.match(/^\s*http-check send meth GET uri \/readyz$/m);
    expect(cfg).to.match(/^\s*http-check expect status 200$/m);
    for (const n of [1, 2, 3]) expect(cfg).to.match(new RegExp(`^\\s*server pds${n} "\\$\\{PDS_${n}\\}" port "\\$\\{PDS_${n}_OPS\\}"$`, 'm'));
    expect(cfg).to.match(/^\s*option redispatch/m);
    // A POST without an Idempotency-Key is never sent twice.
    expect(cfg).to.match(/^\s*http-request disable-l7-retry if METH_POST !\{ req\.hdr\(idempotency-key\) -m found \}$/m);
  });
});
