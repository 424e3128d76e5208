// What the reference servers share: the port they listen on (PORT), the Redis they read
// (REDIS_URL) with the same client options as the service, and the entry they read.
import type { Server } from 'node:http';
import { Redis } from 'ioredis';

export const REFERENCE_KEY = 'pds:p:{bench-ref:player}';
export const REFERENCE_FIELD = 'coins';
/** The leaderboard references' sorted set: the bench's board as a bare ZADD would hold it (member = user id). */
export const REFERENCE_BOARD_KEY = 'bench-ref:board';

export function referenceRedis(): Redis {
  const url = process.env['REDIS_URL'];
  if (!url) throw new Error('REDIS_URL is required');
  return new Redis(url, { enableAutoPipelining: process.env['AUTO_PIPELINING'] !== 'false', maxRetriesPerRequest: 0 });
}

export function listenFromEnv(server: Server): void {
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
    process.stdout.write('listening\n');
  });
  process.once('SIGTERM', () => process.exit(0));
}
