// `npm run capacity` on a small fixture of measured costs (test/fixtures/bench/session-cost.json):
// its rates, cores, instances, memory and masters, each worked out here by hand from the fixture.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/bench/session-cost.json', import.meta.url));
const GiB = 2 ** 30;

async function capacity(...args: string[]): Promise<{ stdout: string; json: Record<string, any> }> {
  const cli = [process.execPath, '--import', 'tsx', 'bench/capacity.ts', '--results', FIXTURE, ...args] as const;
  const [{ stdout }, { stdout: json }] = await Promise.all([
    run(cli[0], cli.slice(1), { cwd: ROOT }),
    run(cli[0], [...cli.slice(1), '--json'], { cwd: ROOT }),
  ]);
  return { stdout, json: JSON.parse(json) as Record<string, any> };
}

describe('bench: npm run capacity', function () {
  this.timeout(30_000);

  it('plans 36,000 players from the fixture with the default model', async () => {
    const { stdout, json: p } = await capacity('--ccu', '36000');
    // Sessions of 30 min: 36,000 / 1,800 s joins and leaves a second; servers of 30 saving every
    // 60 s: 36,000 / 30 / 60; 6 messages and 12 leaderboard writes a player an hour.
    expect(p.rates).to.deep.equal({ join: 20, leave: 20, autosave: 20, message: 60, leaderboard: 120 });
    expect(p.requestsPerSecond).to.equal(240);
    // The fixture's autosave covers 15 players: the model's 30 cost twice as much.
    expect(p.serviceCores.autosave).to.be.closeTo((20 * 15_000 * 2) / 1e6, 1e-9);
    expect(p.serviceCores.total).to.be.closeTo((20 * 1000 + 20 * 500 + 20 * 30_000 + 60 * 500 + 120 * 500) / 1e6, 1e-9);
    // 0.72 cores at 60% of one core each: 2 instances (also the least), 36% busy.
    expect(p.instances).to.equal(2);
    expect(p.cores).to.equal(2);
    expect(p.serviceUtilisation).to.be.closeTo(0.36, 1e-9);
    // Redis: the larger of its process CPU and the time in commands (3,000 µs for the autosave).
    expect(p.redisCores.total).to.be.closeTo((20 * 100 + 20 * 3000 * 2 + 20 * 50 + 60 * 50 + 120 * 50) / 1e6, 1e-9);
    expect(p.mastersForCpu).to.equal(1);
    // 20 stored players per concurrent one, each 2,000 B of data and 40,000 B of history; kept
    // answers: 240 requests a second for a day at 1,000 B; one inbox of 300 B per concurrent player.
    expect(p.memoryBytes).to.deep.equal({
      data: 720_000 * 2000,
      history: 720_000 * 40_000,
      inbox: 36_000 * 300,
      kept: 240 * 86_400 * 1000,
      total: 720_000 * 2000 + 720_000 * 40_000 + 36_000 * 300 + 240 * 86_400 * 1000,
    });
    // 50.99 GB against 70% of 25 GiB a master: 3 masters, each with its replica.
    expect(p.mastersForMemory).to.equal(Math.ceil(p.memoryBytes.total / (25 * GiB * 0.7)));
    expect(p.mastersForMemory).to.equal(3);
    expect(p.masters).to.equal(3);
    expect(p.replicas).to.equal(3);
    expect(p.redisMemoryProvisionedGiB).to.equal(150);
    // Each instance gets twice the fixture's peak resident memory of 100 MiB.
    expect(p.instanceMemoryBytes).to.equal(200 * 2 ** 20);
    expect(stdout).to.match(/^service: 2 instances of 1 core \(2 cores\), 36% busy at peak .*memory 200 MiB each/m);
    expect(stdout).to.match(/^Redis: 3 masters \+ 3 replicas \(1 for CPU .*3 for memory/m);
  });

  it('follows every flag of the model', async () => {
    const { json: p } = await capacity('--ccu', '1000000', '--instance-cores', '2', '--autosave-seconds', '120', '--stored-per-ccu', '10', '--redis-memory-gib', '50');
    const scale = 1_000_000 / 36_000;
    // Autosaves half as often: their cores halve; the rest scale with the players.
    const cores = ((20 * 1000 + 20 * 500 + 10 * 30_000 + 60 * 500 + 120 * 500) / 1e6) * scale;
    expect(p.serviceCores.total).to.be.closeTo(cores, 1e-9);
    expect(p.instances).to.equal(Math.ceil(cores / (2 * 0.6)));
    expect(p.cores).to.equal(p.instances * 2);
    const requests = (20 + 20 + 10 + 60 + 120) * scale;
    expect(p.requestsPerSecond).to.be.closeTo(requests, 1e-6);
    const total = 10_000_000 * (2000 + 40_000) + 1_000_000 * 300 + requests * 86_400 * 1000;
    expect(p.memoryBytes.total).to.be.closeTo(total, 1);
    expect(p.masters).to.equal(Math.max(3, Math.ceil(total / (50 * GiB * 0.7)), p.mastersForCpu));
  });

  it("takes the history of a stored player from a population's results (bench:population)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capacity-'));
    try {
      const file = join(dir, 'population.json');
      writeFileSync(file, JSON.stringify({ date: '2026-11-29', settings: { players: 100_000, days: 60 }, capacity: { historyBytesPerPlayer: 10_000 } }));
      const { stdout, json: p } = await capacity('--ccu', '36000', '--population', file);
      // 720,000 stored players of 10,000 B of history each, instead of the fixture's 40,000.
      expect(p.memoryBytes.history).to.equal(720_000 * 10_000);
      expect(p.memoryBytes.data).to.equal(720_000 * 2000);
      expect(stdout).to.match(/^history: 10,000 B a stored player, .*100,000 players over 60 days/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a plan without --ccu, and a flag that is not a positive number', async () => {
    const cli = [process.execPath, '--import', 'tsx', 'bench/capacity.ts', '--results', FIXTURE];
    const without = await run(cli[0]!, cli.slice(1), { cwd: ROOT }).then(() => undefined, (err: { code: number; stderr: string }) => err);
    expect(without?.code).to.equal(1);
    expect(without?.stderr).to.match(/--ccu/);
    const bad = await run(cli[0]!, [...cli.slice(1), '--ccu', '1000', '--autosave-seconds', '-5'], { cwd: ROOT }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(bad?.stderr).to.match(/positive number/);
  });
});
