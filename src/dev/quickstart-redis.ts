// The Redis the quick start runs on. REDIS_URL set: that one, and no other is started. Unset:
// the quick start's own redis-server with its data under .data/redis, started in a process group
// of its own (Ctrl-C reaches the quick start alone, which stops it after the service's last
// flush). One .data folder has at most one such server: a server left running by a start that
// was killed (kill -9, a closed terminal) is found by its pid and data folder and used again,
// never a second one on the same files.
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../config.js';
import { describeRedis } from '../server.js';
import { connectRedis, createRedis } from '../store/redis/redis.js';
import { freePort, startLocalRedis, type LocalRedis } from './local-redis.js';
import type { Saved } from './quickstart-state.js';

const PREFERRED_REDIS_PORT = 6390;

/** The quick start's own redis-server, started now or found running. */
export interface OwnRedis {
  readonly url: string;
  /** Its process id, to find it again if this start is killed before it stops it. */
  readonly pid: number;
  /** Asks it to exit (SIGTERM: it writes the AOF out), and waits until it has. */
  stop(): Promise<void>;
}

export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((done) => {
    const s = createServer();
    s.once('error', () => done(false));
    s.listen(port, host, () => s.close(() => done(true)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The server at `url` is the redis-server `pid` serving `dataDir`: ours, left running. */
async function isOurs(url: string, pid: number, dataDir: string): Promise<boolean> {
  if (!alive(pid)) return false;
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  probe.on('error', () => {});
  try {
    await probe.connect();
    const info = await probe.info('server');
    const dir = (await probe.config('GET', 'dir')) as string[];
    return new RegExp(`^process_id:${pid}\\r?$`, 'm').test(info) && dir[1] === dataDir;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** A server another start left running: stopped by its pid. */
function adopted(url: string, pid: number): OwnRedis {
  return {
    url,
    pid,
    async stop() {
      if (alive(pid)) process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 200 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 50));
    },
  };
}

function own(local: LocalRedis): OwnRedis {
  return { url: local.url, pid: local.process.pid!, stop: () => local.stop() };
}

async function startPrivate(dataDir: string, port: number): Promise<OwnRedis> {
  const { redisAppendfsync: appendfsync } = loadConfig();
  const local = await startLocalRedis({ dataDir, port, appendfsync, detached: true });
  process.stderr.write(`Started a private redis-server (AOF, appendfsync ${appendfsync}) on ${local.url}, data in .data/redis\n`);
  return own(local);
}

/**
 * The Redis to use. REDIS_URL set and answering: that one. REDIS_URL naming the quick start's
 * own redis-server from an earlier start, which stopped with it: that server is started again on
 * its port. REDIS_URL naming anything else that does not answer: a message that says so.
 */
export async function chooseRedis(saved: Saved, dataDir: string): Promise<OwnRedis | undefined> {
  const redisDir = resolve(dataDir, 'redis');
  const named = process.env['REDIS_URL'];
  if (!named) {
    if (saved.privateRedis && saved.redisUrl && saved.redisPid !== undefined && (await isOurs(saved.redisUrl, saved.redisPid, redisDir))) {
      process.stderr.write(`Using the quick start's own redis-server left running by an earlier start (pid ${saved.redisPid}) on ${saved.redisUrl}\n`);
      process.env['REDIS_URL'] = saved.redisUrl;
      return adopted(saved.redisUrl, saved.redisPid);
    }
    const port = (await portIsFree(PREFERRED_REDIS_PORT)) ? PREFERRED_REDIS_PORT : await freePort();
    const started = await startPrivate(redisDir, port);
    process.env['REDIS_URL'] = started.url;
    return started;
  }
  const probe = createRedis({ url: named, commandTimeoutMs: 2000, connectTimeoutMs: 1000 });
  probe.on('error', () => {});
  try {
    await connectRedis(probe, 2000);
    await probe.quit();
    // The quick start's own server, left running by a start that was killed: stopped with this one.
    const ours = saved.privateRedis && saved.redisUrl === named && saved.redisPid !== undefined && (await isOurs(named, saved.redisPid, redisDir));
    return ours ? adopted(named, saved.redisPid!) : undefined;
  } catch {
    probe.disconnect();
  }
  const port = Number(new URL(named).port);
  if (saved.privateRedis && saved.redisUrl === named && (await portIsFree(port))) {
    process.stderr.write(`REDIS_URL=${named} is the quick start's own redis-server, which stopped with it: starting it again.\n`);
    return startPrivate(redisDir, port);
  }
  throw new Error(
    `Cannot reach the Redis that REDIS_URL names (${describeRedis(loadConfig())}). With REDIS_URL set the quick start uses that Redis and starts none of its own: ` +
      'start that Redis, or run `unset REDIS_URL` and start again to let the quick start run its own redis-server.',
  );
}
