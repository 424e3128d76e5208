// The workspace-wide claim of an Idempotency-Key (saves/idempotency.ts decides what a claim
// means): the fingerprint of the request that first used the key, kept for the key's lifetime.
import { keys } from '../keys.js';
import { noteKeptElsewhere } from '../players/kept-elsewhere.js';
import type { RedisClient } from '../redis/redis.js';

/**
 * Claims `keyHash` for the request `fingerprint` in the workspace, for `ttlSeconds`: answers
 * null when this call made the claim, else what holds it: the fingerprint of the request that
 * made it (this request's own on a retry, another request's when the key was reused), followed
 * by a newline and that request's whole answer when it kept one (keepClaimAnswer). One command:
 * SET NX GET.
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

/** A claim of `keyHash` kept by a release before the claims were spread (keys.legacyIdempotencyClaim), or null. */
export async function readLegacyClaim(redis: RedisClient, workspaceId: string, keyHash: string): Promise<string | null> {
  return redis.get(keys.legacyIdempotencyClaim(workspaceId, keyHash));
}

/**
 * When (ms) the workspace's legacy claims were first read by this release (keys.claimsSpreadSince):
 * `nowMs` if this call is the first. One command: SET NX GET, in the workspace's slot.
 */
export async function claimsSpreadSince(redis: RedisClient, workspaceId: string, nowMs: number): Promise<number> {
  const held = (await redis.call('SET', keys.claimsSpreadSince(workspaceId), String(nowMs), 'NX', 'GET')) as string | null;
  return held === null ? nowMs : Number(held);
}

/**
 * Keeps a request's whole answer in its claim, after the fingerprint (`<fingerprint>\n<answer>`),
 * for the claim's remaining lifetime; nothing when the claim has expired meanwhile. The players
 * the answer names are noted first, each in its own slot (players/kept-elsewhere.ts), so that an
 * erasure of one of them deletes the claim: a keep after that deletion writes nothing (XX).
 */
export async function keepClaimAnswer(
  redis: RedisClient,
  workspaceId: string,
  keyHash: string,
  fingerprint: string,
  answer: string,
  named: { readonly userIds: readonly string[]; readonly expiresAtMs: number },
): Promise<void> {
  await noteKeptElsewhere(redis, workspaceId, named.userIds, { claim: keyHash }, named.expiresAtMs);
  await redis.call('SET', keys.idempotencyClaim(workspaceId, keyHash), `${fingerprint}\n${answer}`, 'XX', 'KEEPTTL');
}

/**
 * About what a kept record costs Redis: its key, its value and a key's own overhead (the
 * dictionary entry, the object, the expiry entry), 48 bytes as measured with 2,000 kept answers
 * (docs/safe-saves.md: 360 bytes for a claim and a player's record together).
 */
export function keptRecordBytes(key: string, valueBytes: number): number {
  return key.length + valueBytes + 48;
}

/** The bytes a claim of `keyHash` costs (keptRecordBytes), with its answer when it keeps one. */
export function claimBytes(workspaceId: string, keyHash: string, fingerprint: string, answerBytes = 0): number {
  return keptRecordBytes(keys.idempotencyClaim(workspaceId, keyHash), fingerprint.length + (answerBytes > 0 ? answerBytes + 1 : 0));
}
