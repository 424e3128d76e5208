// `npm run bench:export`: the time and peak memory (RSS) of the CLI's `workspace export` and
// `workspace import` of BENCH_TRANSFER_PLAYERS players (100,000) with BENCH_TRANSFER_KEYS keys
// each (10), against a private Redis. The players are written straight into Redis in the
// stored form (a value of about 40 bytes a key, updated_at, version and meta as the service
// writes them); then the production build of the CLI exports them to a file and imports that
// file into a new workspace, each as its own process, timed from start to exit, its peak RSS
// reported by the process itself (bench/lib/max-rss.mjs). The import is then checked: the
// same number of players. Results: bench/results/transfer.json; docs/backups.md.
import { execFile } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminOperations } from '../src/admin/operations.js';
import { encodeEntry } from '../src/domain/entry.js';
import { keys } from '../src/store/keys.js';
import { addToStorageTotals } from '../src/store/workspaces/storage-usage.js';
import { runMain, startBenchRedis } from './lib/bench-redis.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PLAYERS = Number(process.env['BENCH_TRANSFER_PLAYERS'] ?? 100_000);
const KEYS = Number(process.env['BENCH_TRANSFER_KEYS'] ?? 10);

interface Measured {
  readonly seconds: number;
  readonly maxRssMb: number;
  readonly stderr: string;
}

function runCli(args: string[], redisUrl: string): Promise<Measured> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', './bench/lib/max-rss.mjs', 'dist/cli/index.js', ...args],
      { cwd: ROOT, env: { ...process.env, REDIS_URL: redisUrl }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${args.join(' ')} failed: ${stderr}`));
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const kb = Number(/MAX_RSS_KB (\d+)/.exec(stderr)?.[1]);
        resolve({ seconds: Math.round(seconds * 100) / 100, maxRssMb: Math.round(kb / 1024), stderr: `${stdout}${stderr}`.replace(/\n?MAX_RSS_KB \d+\n/, '').trim() });
      },
    );
  });
}

runMain('bench:export', async () => {
  const bench = await startBenchRedis('transfer');
  try {
    const ops = new AdminOperations(bench.redis, { actor: 'bench' });
    const source = (await ops.createWorkspace({ name: 'bench source', plan: 'pro' })).workspaceId;
    const target = (await ops.createWorkspace({ name: 'bench target', plan: 'pro' })).workspaceId;
    const now = Date.now();
    let bytes = 0;
    for (let start = 0; start < PLAYERS; start += 1000) {
      const pipeline = bench.redis.pipeline();
      for (let p = start; p < Math.min(PLAYERS, start + 1000); p++) {
        const fields: string[] = [];
        let size = 0;
        for (let k = 0; k < KEYS; k++) {
          const key = `key${k}`;
          const entry = encodeEntry(JSON.stringify({ level: p % 100, coins: p * k, name: `player-${p}` }), now - k);
          fields.push(key, entry);
          size += key.length + entry.length;
        }
        bytes += size;
        pipeline.hset(keys.player(source, String(p)), '\0v', String(1 + (p % 7)), '\0n', String(KEYS), '\0b', String(size), ...fields);
      }
      await pipeline.exec();
    }
    await addToStorageTotals(bench.redis, source, { bytes, players: PLAYERS });
    const usedMb = Math.round(Number(/used_memory:(\d+)/.exec(await bench.redis.info('memory'))![1]) / 1024 / 1024);
    process.stderr.write(`populated ${PLAYERS} players x ${KEYS} keys (${usedMb} MB in Redis)\n`);

    const file = join(bench.dataDir, 'players.ndjson');
    const exported = await runCli(['workspace', 'export', source, '--out', file], bench.server.url);
    process.stderr.write(`export: ${exported.seconds} s, peak RSS ${exported.maxRssMb} MB (${exported.stderr})\n`);
    const imported = await runCli(['workspace', 'import', target, '--in', file], bench.server.url);
    process.stderr.write(`import: ${imported.seconds} s, peak RSS ${imported.maxRssMb} MB (${imported.stderr.split('\n')[0]})\n`);
    const count = (await ops.showWorkspace(target)).storage.players;
    if (count !== PLAYERS) throw new Error(`imported ${count} players, expected ${PLAYERS}`);

    const result = {
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map((n) => Math.round(n * 100) / 100), node: process.version },
      players: PLAYERS,
      keysPerPlayer: KEYS,
      fileMb: Math.round(statSync(file).size / 1024 / 1024),
      redisUsedMb: usedMb,
      export: { seconds: exported.seconds, maxRssMb: exported.maxRssMb, playersPerSecond: Math.round(PLAYERS / exported.seconds) },
      import: { seconds: imported.seconds, maxRssMb: imported.maxRssMb, playersPerSecond: Math.round(PLAYERS / imported.seconds) },
    };
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench/results/transfer.json'), `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await bench.close();
  }
});
