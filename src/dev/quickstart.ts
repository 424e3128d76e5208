// `npm run quickstart`: serves the API and the operator console on a fresh machine. With
// REDIS_URL set it uses that Redis; otherwise its own AOF-persisted redis-server under
// .data/redis (src/dev/quickstart-redis.ts; it never writes into a Redis it was not told about).
// It keeps one demo workspace and one demo key per .data folder across restarts
// (`--rotate-key` for a new key), binds 127.0.0.1 unless HOST says otherwise, makes an admin
// token when ADMIN_TOKEN is unset, prints how to call the API and open the console, and serves
// until Ctrl-C, which stops the service (its last flush) and then its Redis. A taken port stops
// it before anything is started; whatever it started is stopped when a later step fails.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { AdminOperations } from '../admin/operations.js';
import { loadConfig, type Config } from '../config.js';
import { hashApiKey } from '../domain/api-key.js';
import { createLogger } from '../logger.js';
import { startService } from '../server.js';
import { ApiKeyStore } from '../store/workspaces/api-keys.js';
import { connectRedis, createRedis } from '../store/redis/redis.js';
import { chooseRedis, portIsFree, type OwnRedis } from './quickstart-redis.js';
import { QuickstartState, type Saved } from './quickstart-state.js';

const state = new QuickstartState(resolve('.data'));
const rotateAsked = process.argv.slice(2).includes('--rotate-key');

/** A listener's port taken on its address: a message naming the setting that moves it, before anything starts. */
async function refuseTakenPorts(config: Config): Promise<void> {
  const taken: string[] = [];
  if (config.port !== 0 && !(await portIsFree(config.port, config.host))) taken.push(`PORT=${config.port} (the API, on ${config.host})`);
  if (config.admin.port !== 0 && !(await portIsFree(config.admin.port, config.admin.host)))
    taken.push(`ADMIN_PORT=${config.admin.port} (the console and the admin API, on ${config.admin.host})`);
  if (taken.length === 0) return;
  throw new Error(
    `Port taken: ${taken.join('; ')}. Another program listens there (an earlier quick start still running?). ` +
      `Stop it, or choose other ports, for example: PORT=${config.port + 10} ADMIN_PORT=${config.admin.port + 10} npm run quickstart`,
  );
}

/** The kept demo key, if it still opens the demo workspace (not revoked, rotated or expired meanwhile). */
async function keptKey(keys: ApiKeyStore, workspaceId: string): Promise<{ keyId: string; apiKey: string } | undefined> {
  const apiKey = state.readKey();
  if (apiKey === undefined) return undefined;
  const record = await keys.findByHash(hashApiKey(apiKey));
  const expired = record?.expiresAt !== undefined && Date.parse(record.expiresAt) <= Date.now();
  return record && record.workspaceId === workspaceId && record.status === 'active' && !expired ? { keyId: record.keyId, apiKey } : undefined;
}

/** The demo workspace (one per .data) and its key: kept across starts, new when asked or no longer valid. */
async function demoKey(ops: AdminOperations, keys: ApiKeyStore, saved: Saved): Promise<{ workspaceId: string; keyId: string; apiKey: string; kept: boolean }> {
  if (saved.workspaceId && (await ops.workspaces.exists(saved.workspaceId))) {
    const workspaceId = saved.workspaceId;
    const kept = rotateAsked ? undefined : await keptKey(keys, workspaceId);
    if (kept) return { workspaceId, ...kept, kept: true };
    if (saved.keyId) {
      try {
        const rotated = await ops.rotateKey(saved.keyId);
        return { workspaceId, keyId: rotated.key.keyId, apiKey: rotated.key.apiKey, kept: false };
      } catch {
        // Revoked or deleted meanwhile (in the console, say): a new one below.
      }
    }
    const key = await ops.createKey(workspaceId, { label: 'quickstart' });
    return { workspaceId, keyId: key.keyId, apiKey: key.apiKey, kept: false };
  }
  return { ...(await ops.createWorkspace({ name: 'Demo game', plan: 'pro' })), kept: false };
}

async function main(): Promise<void> {
  // Only this machine, unless HOST says otherwise: the demo key is printed on the terminal.
  if (!process.env['HOST']) process.env['HOST'] = '127.0.0.1';
  // The console and the admin API need a token: one for this run when none is set.
  const madeToken = process.env['ADMIN_TOKEN'] ? undefined : randomBytes(24).toString('hex');
  if (madeToken) process.env['ADMIN_TOKEN'] = madeToken;
  await refuseTakenPorts(loadConfig());

  const saved = state.read();
  const ownRedis = await chooseRedis(saved, state.dataDir);
  let stopping = false;
  const stopRedis = async () => {
    await ownRedis?.stop();
  };
  try {
    const config = loadConfig();
    const logger = createLogger(config);
    const redis = createRedis({ url: config.redisUrl, commandTimeoutMs: 5000, connectTimeoutMs: 3000 });
    await connectRedis(redis, 3000);
    const ops = AdminOperations.forInstallation(redis, config, 'quickstart');
    const demo = await demoKey(ops, new ApiKeyStore(redis), saved);
    state.write({
      workspaceId: demo.workspaceId,
      keyId: demo.keyId,
      redisUrl: config.redisUrl,
      privateRedis: ownRedis !== undefined || (saved.privateRedis === true && saved.redisUrl === config.redisUrl),
      ...(ownRedis ? { redisPid: ownRedis.pid } : {}),
    });
    state.writeKey(demo.apiKey);
    await redis.quit();

    const service = await startService(config, logger);
    const base = service.baseUrl;
    const consoleUrl = `${service.opsUrl}/console/`;
    const reach =
      config.host === '127.0.0.1' || config.host === 'localhost' || config.host === '::1'
        ? `bound to ${config.host} only: HOST=0.0.0.0 to answer other machines`
        : `bound to ${config.host}: other machines can reach it`;
    process.stdout.write(
      [
        '',
        `Player data service listening on ${base} (${reach})`,
        `Demo workspace ${demo.workspaceId}, its API key (kept in .data/demo-key, ` +
          (demo.kept ? 'the same as at the last start' : 'new at this start') +
          '; `npm run quickstart -- --rotate-key` for a new one):',
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
        'Ctrl-C stops the service' + (ownRedis ? ', then its redis-server.' : '.'),
        '',
      ].join('\n'),
    );

    // The service first (it writes its last counts out), then the Redis they are written to.
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await service.close();
      await stopRedis();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop());
    process.on('SIGTERM', () => void stop());
  } catch (err) {
    await stopRedis();
    throw err;
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`quickstart failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
