// The right to erasure's own vocabulary: job states and sources, game ids, and the keyed
// digests that stand for a user id wherever the service must remember an erasure without
// keeping the id (tombstones, the audit trail, finished jobs). docs/erasure.md says why the
// key is a secret of the config and not kept beside the digests.
import { createHmac } from 'node:crypto';
import { normalizeUserId } from './ids.js';

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

/** What a template of erasure player names holds in place of the user id. */
export const USER_ID_PLACEHOLDER = '{userId}';
export const PLAYER_NAME_TEMPLATES_MAX = 10;
export const PLAYER_NAME_TEMPLATE_MAX_LENGTH = 100;
/** A template's text around the user id: a player id's characters, at most 63 of them (a player id is at most 64). */
const TEMPLATE_LITERAL = /^[A-Za-z0-9_.-]{0,63}$/;

/**
 * Why a template of erasure player names (`Player_{userId}`: docs/erasure.md) is refused, or
 * undefined for a good one (`{userId}` alone is one: the user id's own player). It holds
 * `{userId}` once, and around it only a player id's characters, one of them at least not a
 * digit: a template of digits alone (`{userId}0`) would name another user's own player (user
 * 42's `420` is user 420).
 */
export function templateProblem(template: string): string | undefined {
  if (template.length > PLAYER_NAME_TEMPLATE_MAX_LENGTH) return `must be at most ${PLAYER_NAME_TEMPLATE_MAX_LENGTH} characters`;
  const parts = template.split(USER_ID_PLACEHOLDER);
  if (parts.length !== 2) return `must hold ${USER_ID_PLACEHOLDER} exactly once`;
  const literal = parts.join('');
  if (!TEMPLATE_LITERAL.test(literal)) return `must have around ${USER_ID_PLACEHOLDER} at most 63 characters, from A-Z a-z 0-9 _ . - (a player id's)`;
  if (literal === '') return undefined; // the user id's own player, erased anyway
  if (/^\d*$/.test(literal)) return `must have around ${USER_ID_PLACEHOLDER} a character other than a digit (else it names another user's own player: user 42's "{userId}0" is user 420)`;
  return undefined;
}

/** The longest player id (domain/ids.ts): no name longer than it is a player. */
const PLAYER_ID_MAX_LENGTH = 64;

/**
 * Whether two templates can name one player for two users: `P{userId}` and `P1{userId}` both
 * name `P12` (user 12's and user 2's), `{userId}_34` and `12_{userId}` both `12_34`; an erasure
 * of either user would erase it. Each way the two user ids can lie in a name of at most
 * PLAYER_ID_MAX_LENGTH characters is tried: the templates' fixed texts must agree where they
 * meet, and a user id's place holds digits only. The same place and length is the same user, and
 * so are ids the fixed texts force to the same digits.
 * (A user id with a leading zero counts too: a refusal too many, never one too few.)
 */
export function templatesOverlap(first: string, second: string): boolean {
  const [a1, b1] = first.split(USER_ID_PLACEHOLDER) as [string, string];
  const [a2, b2] = second.split(USER_ID_PLACEHOLDER) as [string, string];
  for (let n1 = 1; a1.length + n1 + b1.length <= PLAYER_ID_MAX_LENGTH; n1++) {
    const length = a1.length + n1 + b1.length;
    const n2 = length - a2.length - b2.length;
    if (n2 < 1 || (n1 === n2 && a1.length === a2.length)) continue;
    // Each position: a fixed character of one template, or a digit of one user id.
    const at = (a: string, n: number, b: string, i: number): string | undefined => (i < a.length ? a[i] : i < a.length + n ? undefined : b[i - a.length - n]);
    let agree = true;
    for (let i = 0; i < length && agree; i++) {
      const x = at(a1, n1, b1, i);
      const y = at(a2, n2, b2, i);
      agree = x === undefined ? y === undefined || isDigit(y) : y === undefined ? isDigit(x) : x === y;
    }
    if (!agree) continue;
    if (n1 !== n2) return true;
    // As long, in other places: two users only if some digit of the ids is free (a place both
    // ids cover) or fixed to different digits by the other template's text ("{userId}.0" and
    // "0.{userId}" meet only as "0.0": one user).
    for (let j = 0; j < n1; j++) {
      const x = at(a2, n2, b2, a1.length + j);
      const y = at(a1, n1, b1, a2.length + j);
      if (x === undefined || y === undefined || x !== y) return true;
    }
  }
  return false;
}

const isDigit = (c: string) => c >= '0' && c <= '9';

/**
 * The players a user is erased as besides its own id, by the workspace's templates: each
 * template's name once, none the user id itself, and none that is no player id (longer than 64
 * characters with this user id: no player can have it).
 */
export function playerNamesOf(templates: readonly string[], userId: string): string[] {
  const names = templates.map((t) => t.replace(USER_ID_PLACEHOLDER, () => userId)).filter((name) => name !== userId && normalizeUserId(name) === name);
  return [...new Set(names)];
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
