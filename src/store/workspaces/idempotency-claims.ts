// The workspace-wide claim of an Idempotency-Key (saves/idempotency.ts decides what a claim
// means): the fingerprint of the request that first used the key, kept for the key's lifetime.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/**
 * Claims `keyHash` for the request `fingerprint` in the workspace, for `ttlSeconds`: answers
 * null when this call made the claim, else the fingerprint that holds it (this request's own on
 * a retry, another request's when the key was reused). One command: SET NX GET.
 */
export async function claimIdempotencyKey(
  redis: RedisClient,
  workspaceId: string,
  keyHash: string,
  fingerprint: string,
  ttlSeconds: number,
): Promise<string | null> {
  return (await redis.call('SET', keys.idempotencyClaim(workspaceId, keyHash), fingerprint, 'NX', 'GET', 'EX', String(ttlSeconds))) as
    | string
    | null;
}
