// The right to erasure's own vocabulary: job states and sources, game ids, and the keyed
// digests that stand for a user id wherever the service must remember an erasure without
// keeping the id (tombstones, the audit trail, finished jobs). docs/erasure.md says why the
// key is a secret of the config and not kept beside the digests.
import { createHmac } from 'node:crypto';

/** pending: to run (or running); failed: its last attempt failed, retried later; unmapped: waits for a game to be mapped; done. */
export const ERASURE_STATES = ['pending', 'failed', 'unmapped', 'done'] as const;
export type ErasureState = (typeof ERASURE_STATES)[number];

/** Who asked: the platform's webhook, or an operator through the CLI, the admin API or the console. */
export const ERASURE_SOURCES = ['webhook', 'cli', 'admin-api', 'console'] as const;
export type ErasureSource = (typeof ERASURE_SOURCES)[number];

/** Which workspaces a job erases the player in. */
export type ErasureScope =
  | { readonly kind: 'workspace'; readonly workspaceId: string }
  | { readonly kind: 'all-workspaces' }
  /** The platform's games, mapped to workspaces when the job runs. */
  | { readonly kind: 'games'; readonly gameIds: readonly string[] };

/** Game ids are the platform's universe ids: positive whole numbers, kept as decimal strings. */
const GAME_ID = /^[1-9]\d{0,19}$/;

export function normalizeGameId(raw: unknown): string | undefined {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw > 0 ? String(raw) : undefined;
  if (typeof raw === 'string' && GAME_ID.test(raw)) return raw;
  return undefined;
}

// Each digest names what it is of, so a digest of one kind can never be taken for another.
const digest = (secret: string, ...parts: string[]) => createHmac('sha256', secret).update(['pds-erasure-v1', ...parts].join('\0')).digest('hex');

/** Stands for the user in the audit trail and in finished jobs: the same in every workspace. */
export function userDigest(secret: string, userId: string): string {
  return digest(secret, 'user', userId);
}

/** The tombstone of one player: a workspace and a user. */
export function tombstoneDigest(secret: string, workspaceId: string, userId: string): string {
  return digest(secret, 'tombstone', workspaceId, userId);
}

/** Stored once per installation: a process with another secret finds it differs and refuses to go on. */
export function keyCheckDigest(secret: string): string {
  return digest(secret, 'key-check');
}
