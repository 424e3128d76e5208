// `npm run quickstart`: serves the API and the operator console on a fresh machine. With
// REDIS_URL set it uses that Redis; otherwise it starts a private AOF-persisted redis-server
// under .data/redis (it never writes into a Redis it was not told about). It makes sure a demo
// workspace exists with one demo key (rotated on every start: the old key stops working, so
// starts never pile up keys), makes an admin token when ADMIN_TOKEN is unset, prints how to
// call the API and open the console, and serves until Ctrl-C.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AdminOperations } from '../admin/operations.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { describeRedis, startService } from '../server.js';
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

/** What the quick start remembers between starts (never a raw key or the admin token). */
interface Saved {
  workspaceId?: string;
  keyId?: string;
  redisUrl?: string;
  /** The Redis at redisUrl is the quick start's own redis-server. */
  privateRedis?: boolean;
}

function readSaved(): Saved {
  try {
    return existsSync(DEMO_FILE) ? (JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as Saved) : {};
  } catch {
    return {};
  }
}

async function startPrivateRedis(port: number): Promise<LocalRedis> {
  const { redisAppendfsync: appendfsync } = loadConfig();
  const redis = await startLocalRedis({ dataDir: resolve(DATA_DIR, 'redis'), port, appendfsync });
  process.stderr.write(`Started a private redis-server (AOF, appendfsync ${appendfsync}) on ${redis.url}, data in .data/redis\n`);
  return redis;
}

/**
 * The Redis to use. REDIS_URL set and answering: that one. REDIS_URL naming the quick start's
 * own redis-server from an earlier start (exported in this terminal, say), which stopped with
 * it: that server is started again on its port. REDIS_URL naming anything else that does not
 * answer: a message that says so, rather than ioredis's "Connection is closed".
 */
async function chooseRedis(saved: Saved): Promise<LocalRedis | undefined> {
  const named = process.env['REDIS_URL'];
  if (!named) {
    const port = (await portIsFree(PREFERRED_REDIS_PORT)) ? PREFERRED_REDIS_PORT : await freePort();
    const local = await startPrivateRedis(port);
    process.env['REDIS_URL'] = local.url;
    return local;
  }
  const probe = createRedis({ url: named, commandTimeoutMs: 2000, connectTimeoutMs: 1000 });
  probe.on('error', () => {});
  try {
    await connectRedis(probe, 2000);
    await probe.quit();
    return undefined;
  } catch {
    probe.disconnect();
  }
  const port = Number(new URL(named).port);
  if (saved.privateRedis && saved.redisUrl === named && (await portIsFree(port))) {
    process.stderr.write(`REDIS_URL=${named} is the quick start's own redis-server, which stopped with it: starting it again.\n`);
    return startPrivateRedis(port);
  }
  throw new Error(
    `Cannot reach the Redis that REDIS_URL names (${describeRedis(loadConfig())}). With REDIS_URL set the quick start uses that Redis and starts none of its own: ` +
      'start that Redis, or run `unset REDIS_URL` and start again to let the quick start run its own redis-server.',
  );
}

/** The demo workspace's one key: the saved one rotated (the old one stops now), or the workspace made anew. */
async function demoKey(ops: AdminOperations, saved: Saved, redisUrl: string | undefined): Promise<{ workspaceId: string; keyId: string; apiKey: string }> {
  if (saved.workspaceId && saved.redisUrl === redisUrl && (await ops.workspaces.exists(saved.workspaceId))) {
    if (saved.keyId) {
      try {
        const rotated = await ops.rotateKey(saved.keyId);
        return { workspaceId: saved.workspaceId, keyId: rotated.key.keyId, apiKey: rotated.key.apiKey };
      } catch {
        // Revoked or deleted meanwhile (in the console, say): a new one below.
      }
    }
    const key = await ops.createKey(saved.workspaceId, { label: 'quickstart' });
    return { workspaceId: saved.workspaceId, keyId: key.keyId, apiKey: key.apiKey };
  }
  return ops.createWorkspace({ name: 'Demo game', plan: 'pro' });
}

async function main(): Promise<void> {
  const saved = readSaved();
  const localRedis = await chooseRedis(saved);
  // The console and the admin API need a token: one for this run when none is set.
  const madeToken = process.env['ADMIN_TOKEN'] ? undefined : randomBytes(24).toString('hex');
  if (madeToken) process.env['ADMIN_TOKEN'] = madeToken;
  const config = loadConfig();
  const logger = createLogger(config);

  const redis = createRedis({ url: config.redisUrl, commandTimeoutMs: 5000, connectTimeoutMs: 3000 });
  await connectRedis(redis, 3000);
  const ops = AdminOperations.forInstallation(redis, config, 'quickstart');
  const demo = await demoKey(ops, saved, config.redisUrl);
  // Ids only: the raw key and the admin token are never written to disk.
  const remembered: Saved = {
    workspaceId: demo.workspaceId,
    keyId: demo.keyId,
    redisUrl: config.redisUrl,
    privateRedis: localRedis !== undefined || (saved.privateRedis === true && saved.redisUrl === config.redisUrl),
  };
  mkdirSync(DATA_DIR, { recursive: true }); // with REDIS_URL set, no private Redis made it
  writeFileSync(DEMO_FILE, JSON.stringify(remembered));
  await redis.quit();

  const service = await startService(config, logger);
  const base = service.baseUrl;
  const consoleUrl = `${service.opsUrl}/console/`;
  process.stdout.write(
    [
      '',
      `Player data service listening on ${base}`,
      `Demo workspace ${demo.workspaceId}, its API key (shown once; a new one on every start, the last one stops working):`,
      '',
      `  export PDS_KEY=${demo.apiKey}`,
      '',
      'Try it:',
      `  curl -s ${base}/ping -H "x-api-key: $PDS_KEY"`,
      `  curl -s -X POST ${base}/data/set -H "x-api-key: $PDS_KEY" -H 'Content-Type: application/json' -d '{"userId":42,"key":"coins","value":100}'`,
      `  curl -s "${base}/data?userId=42&key=coins" -H "x-api-key: $PDS_KEY"`,
      '',
      `Operator console: ${consoleUrl}`,
      madeToken
        ? `  sign in with this admin token (made for this run; set ADMIN_TOKEN to keep one):\n\n  ${madeToken}\n`
        : '  sign in with your ADMIN_TOKEN',
      `Admin CLI against this Redis:  REDIS_URL=${config.redisUrl} ./pds --help`,
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
