// JSON Schemas of the admin API's request bodies and queries. Values are checked again, with
// the same messages as the CLI gets, by admin/inputs.ts inside each operation.
import { keySchema, valueSchema } from './data.js';

const name = { type: 'string', minLength: 1, maxLength: 100, description: 'Workspace name, 1-100 characters.' } as const;
const plan = { type: 'string', enum: ['free', 'pro'], description: 'Plan: free or pro.' } as const;
const duration = {
  type: ['string', 'integer'],
  description: 'A duration: 30s, 15m, 12h, 90d, 2w, 500ms; a bare number is seconds.',
} as const;

export const createWorkspaceBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name,
    plan: { ...plan, description: 'Plan; default free.' },
    id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Workspace id; default generated.' },
  },
} as const;

export const updateWorkspaceBody = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: { name, plan },
} as const;

export const deleteWorkspaceQuery = {
  type: 'object',
  properties: {
    force: { type: 'string', enum: ['true', 'false'], description: 'Sweep even if the workspace is no longer found.' },
  },
} as const;

export const importQuery = {
  type: 'object',
  properties: {
    mode: {
      type: 'string',
      enum: ['skip', 'overwrite', 'fail'],
      description: 'Existing players: skip keeps them (the default), overwrite replaces them, fail writes nothing if any exists (docs/backups.md).',
    },
  },
} as const;

/** The upload of POST /workspaces/{id}/import, for the document only: it is read as a stream, line by line. */
export const importBody = {
  type: 'string',
  description: 'NDJSON, one player a line: {"userId","version","data":{"<key>":{"value","updated_at"}}}, as the export writes it.',
} as const;

export const createKeyBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    scope: { type: 'string', enum: ['read', 'write'], description: 'read: ping and read only; write (default): everything.' },
    label: { type: 'string', maxLength: 100, description: 'A note to tell keys apart.' },
    expiresAt: { type: 'string', description: 'ISO 8601 time after which the key is refused.' },
    expiresIn: { ...duration, description: 'Expire after this long (instead of expiresAt).' },
  },
} as const;

export const rotateKeyBody = {
  type: 'object',
  additionalProperties: false,
  properties: { grace: { ...duration, description: 'How long the old key keeps working; default 0 (stops now).' } },
} as const;

const adminIfVersion = {
  type: 'integer',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "Write only when the player's version equals this (the version the caller read); else 409 VERSION_CONFLICT and nothing is written.",
} as const;

export const setPlayerBody = {
  type: 'object',
  required: ['key', 'value'],
  additionalProperties: false,
  properties: { key: keySchema, value: valueSchema, ifVersion: adminIfVersion },
} as const;

/** DELETE of a player or one key: ?key= and, to delete only what the caller saw, ?ifVersion=. */
export const deletePlayerQuery = {
  type: 'object',
  properties: {
    key: keySchema,
    ifVersion: { type: 'string', pattern: '^[0-9]{1,15}$', description: adminIfVersion.description },
  },
} as const;

export const playerQuery = {
  type: 'object',
  properties: {
    key: keySchema,
    purpose: {
      type: 'string',
      enum: ['export', 'view'],
      description: 'Without ?key: `view` when a person looks at the player (the console\'s page; audited as player.view), `export` (the default) when the data leaves as a file (audited as player.export).',
    },
  },
} as const;

/** GET of a player's history: a page of at most `limit` versions older than `before`. */
export const historyQuery = {
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'How many versions, 1-100; default 20.' },
    before: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'Only versions below this one: the previous page\'s `nextBefore`.' },
  },
} as const;

/** POST of a player's messages: one left by an operator (a gift, a note from support). */
export const adminSendMessageBody = {
  type: 'object',
  required: ['message'],
  additionalProperties: false,
  properties: {
    message: { description: 'Any JSON, at most MESSAGE_MAX_BYTES as JSON.' },
    ttlSeconds: { type: 'integer', minimum: 60, description: 'How long it waits, in seconds (default MESSAGE_TTL_SECONDS, at most MESSAGE_MAX_TTL_SECONDS).' },
  },
} as const;

/** DELETE of a player's messages: one (?id=), or all of them. */
export const deleteMessagesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { id: { type: 'string', pattern: '^msg_[0-9]{19}$', description: 'The message to delete; every waiting message without it.' } },
} as const;

/** The `:version` of GET .../history/:version. */
export const versionParam = { type: 'string', pattern: '^[0-9]{1,15}$', description: 'A version the history retains.' } as const;

export const restorePlayerBody = {
  type: 'object',
  required: ['version'],
  additionalProperties: false,
  properties: {
    version: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The retained version to bring back (see the history).' },
    force: {
      type: 'boolean',
      description: "End the game server's session that holds the player first (its next write gets SESSION_LOST); without it, 409 SESSION_LOCKED.",
    },
  },
} as const;

export const usageQuery = {
  type: 'object',
  properties: { days: { type: 'string', pattern: '^[0-9]{1,2}$', description: 'Days back, 1-31; default 30.' } },
} as const;

export const auditQuery = {
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,5}$', description: 'How many entries, 1-10000; default 50.' },
    workspace: { type: 'string', description: 'Only entries about this workspace.' },
    action: { type: 'string', maxLength: 64, description: 'Only this action (`player.set`), or actions starting with what comes before a final `*` (`player.*`).' },
    actor: { type: 'string', maxLength: 128, description: 'Only this actor: `console`, `admin-api`, `cli:<user>`.' },
    since: { type: 'string', maxLength: 40, description: 'Only entries at or after this ISO 8601 time.' },
    until: { type: 'string', maxLength: 40, description: 'Only entries at or before this ISO 8601 time.' },
  },
} as const;

/** GET /players/search: a user id in every workspace, a page of workspaces a call. */
export const playerSearchQuery = {
  type: 'object',
  required: ['userId'],
  properties: {
    userId: { type: 'string', minLength: 1, maxLength: 64, description: 'The user id looked for, exactly.' },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Workspaces checked in this call, 1-500; default 100.' },
    cursor: { type: 'string', maxLength: 64, description: 'The `next` of the call before.' },
  },
} as const;

/** GET of a workspace's players: a page newest first, or a search by id (exact or prefix). */
export const playerListQuery = {
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Players per page, 1-100; default 25.' },
    cursor: { type: 'string', maxLength: 100, description: 'The `next` of the page before.' },
    prefix: { type: 'string', maxLength: 64, description: 'Only players whose user id starts with this (ZSCAN of the players list, in pages).' },
    userId: { type: 'string', maxLength: 64, description: 'Exactly this player, found even when it was written before the players list existed.' },
  },
} as const;
