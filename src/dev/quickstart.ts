// `npm run quickstart`: serves the API on a fresh machine. With REDIS_URL set it uses that
// Redis; otherwise it starts a private AOF-persisted redis-server under .data/redis (it never
// writes into a Redis it was not told about). It then makes sure a demo workspace exists,
// issues a fresh key for it, prints how to call the API, and serves until Ctrl-C.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AdminOperations } from '../admin/operations.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startService } from '../server.js';
import { connectRedis, createRedis } from '../store/redis/redis.js';
import { freePort, startLocalRedis, type LocalRedis } from './local-redis.js';

const DATA_DIR = resolve('.data');
const DEMO_FILE = resolve(DATA_DIR, 'demo-workspace.json');
const PREFERRED_REDIS_PORT = 6390;

async function portIsFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((done) => {
    const s = createServer();
    s.once('error', () => done(false));
    s.listen(port, '127.0.0.1', () => s.close(() => done(true)));
  });
}

async function main(): Promise<void> {
  let localRedis: LocalRedis | undefined;
  if (!process.env['REDIS_URL']) {
    const { redisAppendfsync: appendfsync } = loadConfig();
    const port = (await portIsFree(PREFERRED_REDIS_PORT)) ? PREFERRED_REDIS_PORT : await freePort();
    localRedis = await startLocalRedis({ dataDir: resolve(DATA_DIR, 'redis'), port, appendfsync });
    process.env['REDIS_URL'] = localRedis.url;
    process.stderr.write(`Started a private redis-server (AOF, appendfsync ${appendfsync}) on ${localRedis.url}, data in .data/redis\n`);
  }
  const config = loadConfig();
  const logger = createLogger(config);

  const redis = createRedis({ url: config.redisUrl, commandTimeoutMs: 5000, connectTimeoutMs: 3000 });
  await connectRedis(redis, 3000);
  const ops = AdminOperations.forInstallation(redis, config, 'quickstart');
  let demo: { workspaceId: string; keyId: string; apiKey: string };
  const saved = existsSync(DEMO_FILE) ? (JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as { workspaceId?: string; redisUrl?: string }) : {};
  if (saved.workspaceId && saved.redisUrl === config.redisUrl && (await ops.workspaces.exists(saved.workspaceId))) {
    const key = await ops.createKey(saved.workspaceId, { label: 'quickstart' });
    demo = key;
  } else {
    demo = await ops.createWorkspace({ name: 'Demo game', plan: 'pro' });
    // Only the workspace id is remembered; the raw key is never written to disk.
    writeFileSync(DEMO_FILE, JSON.stringify({ workspaceId: demo.workspaceId, redisUrl: config.redisUrl }));
  }
  await redis.quit();

  const service = await startService(config, logger);
  const base = service.baseUrl;
  process.stdout.write(
    [
      '',
      `Player data service listening on ${base}`,
      `Demo workspace ${demo.workspaceId}, API key (shown once, new on every start):`,
      '',
      `  export PDS_KEY=${demo.apiKey}`,
      '',
      'Try it:',
      `  curl -s ${base}/ping -H "x-api-key: $PDS_KEY"`,
      `  curl -s -X POST ${base}/data/set -H "x-api-key: $PDS_KEY" -H 'Content-Type: application/json' -d '{"userId":42,"key":"coins","value":100}'`,
      `  curl -s "${base}/data?userId=42&key=coins" -H "x-api-key: $PDS_KEY"`,
      '',
      `Admin CLI against this Redis:  REDIS_URL=${config.redisUrl} npm run cli -- --help`,
      'Ctrl-C stops the service' + (localRedis ? ' and its redis-server.' : '.'),
      '',
    ].join('\n'),
  );

  const stop = async () => {
    await service.close();
    await localRedis?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`quickstart failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
