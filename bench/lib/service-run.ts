// What bench:neighbour and bench:burst share: a private Redis, the real service on it in a child
// process (production mode, logging warnings only, with `env` on top), the run against it, and
// both stopped whatever happens.
import type { Redis } from 'ioredis';
import { startBenchRedis } from './bench-redis.js';
import { spawnTarget } from './processes.js';

export async function againstService<T>(
  name: string,
  env: Record<string, string>,
  run: (baseUrl: string, pid: number, redis: Redis) => Promise<T>,
): Promise<T> {
  const bench = await startBenchRedis(name);
  const service = await spawnTarget({
    name: 'service',
    args: ['--import', 'tsx', 'src/main.ts'],
    env: { REDIS_URL: bench.server.url, HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    readyPath: '/api/v1/ping',
  });
  try {
    return await run(`${service.url}/api/v1`, service.process.pid!, bench.redis);
  } finally {
    await service.stop();
    await bench.close();
  }
}
