// Provides the Redis the tests run against, in this order: REDIS_URL if set; else a
// testcontainers Redis when a Docker engine answers (testcontainers is not even loaded when
// there is no Docker socket or DOCKER_HOST); else a redis-server process of our own on a free
// port with a temp folder. Tests never flush: each one works in fresh random workspaces.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REDIS_LIST_SETTINGS, startLocalRedis } from '../../src/dev/local-redis.js';

export interface TestRedis {
  readonly url: string;
  readonly source: 'REDIS_URL' | 'testcontainers' | 'redis-server';
  stop(): Promise<void>;
}

function dockerSocketAnswers(timeoutMs = 500): Promise<boolean> {
  const host = process.env['DOCKER_HOST'];
  let path = '/var/run/docker.sock';
  if (host) {
    if (!host.startsWith('unix://')) return Promise.resolve(true); // tcp: let testcontainers decide
    path = host.slice('unix://'.length);
  }
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export async function provideRedis(): Promise<TestRedis> {
  const fromEnv = process.env['REDIS_URL'];
  if (fromEnv) return { url: fromEnv, source: 'REDIS_URL', stop: async () => {} };

  if (await dockerSocketAnswers()) {
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine').withCommand(['redis-server', '--appendonly', 'yes', ...REDIS_LIST_SETTINGS]).start();
    return { url: container.getConnectionUrl(), source: 'testcontainers', stop: async () => void (await container.stop()) };
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'pds-test-redis-'));
  const redis = await startLocalRedis({ dataDir });
  return {
    url: redis.url,
    source: 'redis-server',
    async stop() {
      await redis.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
