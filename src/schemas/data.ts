// JSON Schemas of the public data endpoints' inputs. Compiled once by http/validate.ts; the
// OpenAPI document is generated from these same objects.
import { USER_ID_PATTERN_SOURCE } from '../domain/ids.js';
import { CONTROL_CHARACTERS, hasControlCharacter } from '../domain/value.js';

export const KEY_MAX_LENGTH = 128;

/**
 * The largest version an import may give a player. ifVersion takes any safe integer, but only
 * versions up to 2^53 - 49 are read back exactly (above, ioredis decodes an integer reply as
 * n * 10 + digit, which rounds: 2^53 - 1 reads as 2^53, which no ifVersion can name). Writes
 * raise a version by one, so only an import can put a player up there; at most 2^52, the player
 * it writes can take 2^52 writes more, every one read back and matched by ifVersion.
 */
export const MAX_IMPORTED_VERSION = 2 ** 52;

/** A name without control characters (C0, DEL and C1: domain/value.ts), as a JSON Schema pattern. */
const NO_CONTROL_PATTERN = `^[^${CONTROL_CHARACTERS}]*$`;

/**
 * keySchema's test, for keys that do not come through ajv (an import's lines, the admin side):
 * 1-128 characters counted as ajv counts them (a surrogate pair is one), none a control character.
 */
export function isDataKey(key: string): boolean {
  if (key === '' || hasControlCharacter(key)) return false;
  let length = 0;
  for (const _ of key) if (++length > KEY_MAX_LENGTH) return false;
  return true;
}

/** ifVersion and sessionId, which every write takes (defined below with the batch schemas). */
function writeGuardsOf() {
  return {
    ifVersion: {
      type: 'integer',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Apply only when the player's version equals this; else 409 VERSION_CONFLICT and nothing is written.",
    },
    sessionId: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,64}$',
      description: 'The session id that acquire returned. Required for writes while a live session holds the player.',
    },
  } as const;
}

export const userIdSchema = {
  description:
    'Player user id: a non-negative safe integer, or a string of 1-64 characters from A-Z a-z 0-9 _ . - (42 and "42" are the same player).',
  type: ['integer', 'string'],
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  pattern: USER_ID_PATTERN_SOURCE,
} as const;

/** In a query string every value is a string. */
export const userIdQuerySchema = {
  description: userIdSchema.description,
  type: 'string',
  pattern: USER_ID_PATTERN_SOURCE,
} as const;

export const keySchema = {
  description: `Name of the entry: 1-${KEY_MAX_LENGTH} characters, no control characters.`,
  type: 'string',
  minLength: 1,
  maxLength: KEY_MAX_LENGTH,
  pattern: NO_CONTROL_PATTERN,
} as const;

export const valueSchema = {
  description: 'Any JSON value except null: number, string, boolean, object or array, nested freely.',
  not: { type: 'null' },
} as const;

export const getDataQuery = {
  type: 'object',
  required: ['userId'],
  properties: { userId: userIdQuerySchema, key: keySchema },
} as const;

export const setBody = {
  type: 'object',
  required: ['userId', 'key', 'value'],
  additionalProperties: false,
  properties: { userId: userIdSchema, key: keySchema, value: valueSchema, ...writeGuardsOf() },
} as const;

export const incrementBody = {
  type: 'object',
  required: ['userId', 'key'],
  additionalProperties: false,
  properties: {
    userId: userIdSchema,
    key: keySchema,
    amount: { type: 'number', description: 'Amount to add (default 1); may be negative or fractional.' },
    defaultValue: { type: 'number', description: 'Starting value when the key does not exist (default 0).' },
    ...writeGuardsOf(),
  },
} as const;

export const deleteBody = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: {
    userId: userIdSchema,
    key: { ...keySchema, description: 'Key to delete; omit it to delete all of the player\'s data.' },
    ...writeGuardsOf(),
  },
} as const;

// --- safe saves: versions, batches, sessions (docs/safe-saves.md) ---

export const MAX_BATCH_OPS = 100;
export const MAX_BATCH_PLAYERS = 100;

/** The optional fields every write takes. */
const writeGuards = writeGuardsOf();
export const sessionIdSchema = writeGuards.sessionId;

export const opSchema = {
  type: 'object',
  required: ['op', 'key'],
  additionalProperties: false,
  properties: {
    op: { type: 'string', enum: ['set', 'increment', 'delete'] },
    key: keySchema,
    value: { ...valueSchema, description: 'set: the value.' },
    amount: { type: 'number', description: 'increment: amount to add (default 1).' },
    defaultValue: { type: 'number', description: 'increment: starting value when the key does not exist (default 0).' },
  },
} as const;

const playerOpsProperties = {
  userId: userIdSchema,
  ops: {
    type: 'array',
    maxItems: MAX_BATCH_OPS,
    items: opSchema,
    description: `1-${MAX_BATCH_OPS} operations, each key at most once; empty only with sessionId (renews or releases the session).`,
  },
  ...writeGuards,
  release: { type: 'boolean', description: 'With sessionId: release the session once the ops are applied, in the same step.' },
  ackMessages: {
    type: 'array',
    maxItems: 100,
    items: { type: 'string', pattern: '^msg_[0-9]{19}$' },
    description:
      'Messages this save acknowledges (processed): removed in the same step as the ops, fenced by the session like them. An id no longer waiting is no error (a retried save).',
  },
} as const;

export const batchPlayerSchema = {
  type: 'object',
  required: ['userId', 'ops'],
  additionalProperties: false,
  properties: playerOpsProperties,
} as const;

export const batchBody = batchPlayerSchema;

export const multiBatchBody = {
  type: 'object',
  required: ['players'],
  additionalProperties: false,
  properties: {
    players: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_PLAYERS,
      items: batchPlayerSchema,
      description: `1-${MAX_BATCH_PLAYERS} players, each userId once; each player's ops are atomic, players succeed or fail independently.`,
    },
  },
} as const;

const ownerSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: NO_CONTROL_PATTERN,
  description: "The game server's id (e.g. the platform's JobId): 1-128 characters, no control characters.",
} as const;

const ttlSecondsSchema = {
  type: 'integer',
  minimum: 30,
  maximum: 3600,
  description: 'Lease in seconds, 30-3600 (default 300 on acquire; renew keeps the session\'s own).',
} as const;

const acquireOptions = {
  owner: ownerSchema,
  ttlSeconds: ttlSecondsSchema,
  steal: { type: 'boolean', description: 'Take the lock from a live holder at once.' },
  load: { type: 'boolean', description: "Also answer the player's whole data in data.values, and the messages waiting for it in data.messages." },
} as const;

export const acquireBody = {
  type: 'object',
  required: ['userId', 'owner'],
  additionalProperties: false,
  properties: { userId: userIdSchema, ...acquireOptions },
} as const;

/** A server that opens with many players acquires them in one request, each on its own. */
export const multiAcquireBody = {
  type: 'object',
  required: ['players', 'owner'],
  additionalProperties: false,
  properties: {
    players: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_PLAYERS,
      items: userIdSchema,
      description: `1-${MAX_BATCH_PLAYERS} user ids, each once: each player is acquired on its own (one may be locked while the others are not).`,
    },
    ...acquireOptions,
  },
} as const;

export const sendMessageBody = {
  type: 'object',
  required: ['userId', 'message'],
  additionalProperties: false,
  properties: {
    userId: userIdSchema,
    message: { description: 'Any JSON: a gift, a note. At most MESSAGE_MAX_BYTES (16 KiB) as JSON.' },
    ttlSeconds: {
      type: 'integer',
      minimum: 60,
      description: 'How long it waits to be processed, in seconds (default 30 days; at most MESSAGE_MAX_TTL_SECONDS, 90 days).',
    },
  },
} as const;

export const messagesQuery = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: { userId: userIdQuerySchema },
} as const;

export const versionsQuery = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: {
    userId: userIdQuerySchema,
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Versions a page, 1-100 (default 20).' },
    before: { type: 'string', pattern: '^[0-9]{1,16}$', description: "The page's nextBefore: versions below it." },
  },
} as const;

export const versionQuery = {
  type: 'object',
  required: ['userId', 'version'],
  additionalProperties: false,
  properties: { userId: userIdQuerySchema, version: { type: 'string', pattern: '^[0-9]{1,16}$', description: 'A version the history lists.' } },
} as const;

export const renewBody = {
  type: 'object',
  required: ['userId', 'sessionId'],
  additionalProperties: false,
  properties: { userId: userIdSchema, sessionId: sessionIdSchema, ttlSeconds: ttlSecondsSchema },
} as const;

export const releaseBody = {
  type: 'object',
  required: ['userId', 'sessionId'],
  additionalProperties: false,
  properties: { userId: userIdSchema, sessionId: sessionIdSchema },
} as const;
