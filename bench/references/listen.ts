// What the reference servers share: the port they listen on (PORT), the Redis they read
// (REDIS_URL) with the same client options as the service, and the entry they read.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { keys } from '../../src/store/keys.js';

export const REFERENCE_KEY = 'pds:p:{bench-ref:player}';
export const REFERENCE_FIELD = 'coins';
/** The leaderboard references' sorted set: the bench's board as a bare ZADD would hold it (member = user id). */
export const REFERENCE_BOARD_KEY = 'bench-ref:board';

/**
 * API key -> workspace id of the bench's seeded workspaces (REFERENCE_WORKSPACES_FILE, a JSON
 * object the bench writes), so that a reference reads the very player hash the service reads for
 * the same rotating request: the same keys over the same slots, not one hot key.
 */
const workspaceOf: Map<string, string> = (() => {
  const file = process.env['REFERENCE_WORKSPACES_FILE'];
  return new Map(file ? Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : []);
})();

/** The player hash the service reads for this API key and user id; the one seeded entry when the key is not the bench's. */
export function referenceKey(apiKey: string | undefined, userId: string | undefined): string {
  const workspaceId = apiKey === undefined ? undefined : workspaceOf.get(apiKey);
  return workspaceId === undefined || !userId ? REFERENCE_KEY : keys.player(workspaceId, userId);
}

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
