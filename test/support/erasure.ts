// Helpers for the right-to-erasure tests: the secrets, notifications signed as the platform's
// webhook page documents (computed here with node:crypto, not with the service's own signer,
// so a mistake there cannot hide in both), a wait for a job's state, and the keys of a player.
import { createHmac, randomInt } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Config } from '../../src/config.js';
import type { PlayerPlace } from '../../src/erasure/places.js';
import { ErasureWorker } from '../../src/erasure/worker.js';
import { createLogger } from '../../src/logger.js';
import { AuditLogStore } from '../../src/store/installation/audit-log.js';
import { keys } from '../../src/store/keys.js';
import { fetchRecorded, type ApiResponse } from './service.js';

export const WEBHOOK_SECRET = 'test-webhook-secret-0123456789';
export const DIGEST_SECRET = 'test-digest-secret-0123456789';
/** Both secrets: the webhook on, erasures possible. */
export const ERASURE_ENV = { ROBLOX_WEBHOOK_SECRET: WEBHOOK_SECRET, ERASURE_DIGEST_SECRET: DIGEST_SECRET } as const;

/** A user id no other test uses: a large number, so it is never a substring of another id by chance. */
export function freshUserId(): number {
  return randomInt(1_000_000_000, 2 ** 40);
}

/** A game id no other test maps. */
export function freshGameId(): number {
  return randomInt(1_000_000_000, 2 ** 45);
}

export function erasureNotification(userId: number, gameIds: number[], notificationId = `n-${randomInt(1e9)}-${Date.now()}`): string {
  return JSON.stringify({
    NotificationId: notificationId,
    EventType: 'RightToErasureRequest',
    EventTime: new Date().toISOString(),
    EventPayload: { UserId: userId, GameIds: gameIds },
  });
}

/** `roblox-signature` as the platform computes it: Base64 HMAC-SHA256 of `<t>.<body>`. */
export function platformSignature(body: string | Buffer, timestamp = Math.floor(Date.now() / 1000), secret = WEBHOOK_SECRET): string {
  const mac = createHmac('sha256', secret).update(Buffer.concat([Buffer.from(`${timestamp}.`), Buffer.from(body)])).digest('base64');
  return `t=${timestamp},v1=${mac}`;
}

/** POSTs a body to the webhook, signed unless `signature` says otherwise (null: no header). */
export function postWebhook(
  baseUrl: string,
  body: string | Buffer,
  options: { signature?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Roblox-Webhooks', ...options.headers };
  const signature = options.signature === undefined ? platformSignature(body) : options.signature;
  if (signature !== null) headers['roblox-signature'] = signature;
  return fetchRecorded(`${baseUrl}/webhooks/roblox`, 'POST', headers, typeof body === 'string' ? body : new Uint8Array(body));
}

export async function jobState(redis: Redis, jobId: string): Promise<Record<string, string>> {
  return redis.hgetall(keys.erasureJob(jobId));
}

/** Waits until the job is in one of `states`; answers its fields (fails the test past the time). */
export async function waitForJob(redis: Redis, jobId: string, states: readonly string[] = ['done'], timeoutMs = 15_000): Promise<Record<string, string>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const fields = await jobState(redis, jobId);
    if (fields['state'] !== undefined && states.includes(fields['state'])) return fields;
    if (Date.now() > until) throw new Error(`job ${jobId} not ${states.join('/')} within ${timeoutMs} ms: ${JSON.stringify(fields)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Every key of the workspace that carries this player's tag (SCAN over the whole keyspace). */
export async function keysOfPlayer(redis: Redis, workspaceId: string, userId: string | number): Promise<string[]> {
  const prefix = keys.player(workspaceId, String(userId));
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', keys.playerPattern(workspaceId), 'COUNT', 1000);
    cursor = next;
    for (const key of page) if (key.startsWith(prefix)) found.push(key);
  } while (cursor !== '0');
  return found;
}

/** Every key of the workspace's players (any player). */
export async function keysOfWorkspacePlayers(redis: Redis, workspaceId: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', keys.playerPattern(workspaceId), 'COUNT', 1000);
    cursor = next;
    found.push(...page);
  } while (cursor !== '0');
  return found.sort();
}

/**
 * A place a player lives of the test's own (erasure/places.ts): it fails while `failing` says so
 * for the player, as a board node lost midway through an erasure, and records what it removed.
 */
export class TestPlace implements PlayerPlace {
  readonly removed: Array<[string, string]> = [];
  constructor(
    readonly name: string,
    public failing: (userId: string) => boolean,
  ) {}
  async removePlayer(workspaceId: string, userId: string): Promise<void> {
    if (this.failing(userId)) throw new Error('board node unavailable');
    this.removed.push([workspaceId, userId]);
  }
}

/** An erasure worker of the test's own over these places (no service with the digest secret runs beside it). */
export function testWorker(redis: Redis, config: Config, places: readonly PlayerPlace[]): ErasureWorker {
  return new ErasureWorker({
    redis,
    config: config.erasure,
    secret: DIGEST_SECRET,
    logger: createLogger({ logLevel: 'silent', nodeEnv: 'test' }),
    places,
    audit: new AuditLogStore(redis, 1000),
  });
}
