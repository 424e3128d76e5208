// JSON Schemas of the public API's answers: the envelopes the OpenAPI document publishes and
// the test suite checks every received response against. Success envelopes are closed
// (additionalProperties: false), so a field added to an answer fails the build until it is
// described here.
import { playerAtVersion, playerHistoryPage } from './admin-responses.js';
import { ErrorCode } from '../errors.js';
import { keySchema, valueSchema } from './data.js';
import { successAnswer } from './envelope.js';

export const errorEnvelope = {
  type: 'object',
  required: ['success', 'error', 'code'],
  additionalProperties: false,
  properties: {
    success: { const: false },
    error: { type: 'string', minLength: 1, description: 'Human-readable message; clients decide by `code`, not by this.' },
    code: {
      type: 'string',
      enum: Object.values(ErrorCode),
      description: 'Stable machine-readable error code (docs/safe-saves.md, "Error codes").',
    },
    version: { type: 'integer', minimum: 0, description: "The player's current version (VERSION_CONFLICT, PLAYER_NOT_FOUND, KEY_NOT_FOUND)." },
    data: { type: 'object', description: 'Details of the error, e.g. the lock holder of SESSION_LOCKED: {owner, expiresAt}.' },
  },
} as const;

const success = { const: true } as const;
const planSchema = { type: 'string', enum: ['free', 'pro'] } as const;
const isoTimeSchema = {
  type: 'string',
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  description: 'ISO 8601 UTC timestamp with milliseconds.',
} as const;

export const pingResponse = {
  type: 'object',
  required: ['success', 'workspaceId', 'workspaceName', 'plan'],
  additionalProperties: false,
  properties: {
    success,
    workspaceId: { type: 'string' },
    workspaceName: { type: 'string' },
    plan: planSchema,
  },
} as const;

export const versionSchema = {
  type: 'integer',
  minimum: 0,
  description: "The player's version: 0 before any data, raised by one by every write that changes something.",
} as const;

const entrySchema = {
  type: 'object',
  required: ['key', 'value', 'updated_at'],
  additionalProperties: false,
  properties: { key: keySchema, value: valueSchema, updated_at: isoTimeSchema },
} as const;

export const entryResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: { success, data: entrySchema, version: versionSchema },
} as const;

const valuesSchema = {
  type: 'object',
  additionalProperties: valueSchema,
  description: 'Every stored key of the player, mapped to its value.',
} as const;

export const allEntriesResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: { success, data: { ...valuesSchema, minProperties: 1 }, version: versionSchema },
} as const;

export const getDataResponse = {
  description: 'One entry when `key` is given, otherwise every entry of the player.',
  anyOf: [entryResponse, allEntriesResponse],
} as const;

export const incrementResponse = {
  type: 'object',
  required: ['success', 'value', 'version'],
  additionalProperties: false,
  properties: { success, value: { type: 'number', description: 'The value after the addition.' }, version: versionSchema },
} as const;

export const deleteResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: {
    success,
    data: {
      type: 'object',
      required: ['deleted'],
      additionalProperties: false,
      properties: { deleted: { type: 'integer', minimum: 0, description: 'How many keys were removed.' } },
    },
    version: versionSchema,
  },
} as const;

const opResult = {
  description: 'One per op, in order: a set echoes key, value and updated_at; an increment key and the new value; a delete key and deleted (0 or 1).',
  anyOf: [
    entrySchema,
    { type: 'object', required: ['key', 'value'], additionalProperties: false, properties: { key: keySchema, value: { type: 'number' } } },
    {
      type: 'object',
      required: ['key', 'deleted'],
      additionalProperties: false,
      properties: { key: keySchema, deleted: { type: 'integer', minimum: 0, maximum: 1 } },
    },
  ],
} as const;

const resultsSchema = { type: 'array', items: opResult } as const;

/** A message waiting for a player, as delivered and listed. */
export const messageSchema = {
  type: 'object',
  required: ['id', 'message', 'sentAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'Acknowledge it with this id (ackMessages) once processed.' },
    message: { description: 'The message as sent (any JSON).' },
    sentAt: isoTimeSchema,
    expiresAt: { ...isoTimeSchema, description: 'When it stops waiting, unprocessed (listed messages only).' },
  },
} as const;

const messagesSchema = {
  type: 'array',
  items: messageSchema,
  description: "Messages that arrived for the player since the session was last handed some, oldest first: apply each, then acknowledge it with the save that keeps its effect (ackMessages).",
} as const;

export const batchResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: {
    success,
    data: { type: 'object', required: ['results'], additionalProperties: false, properties: { results: resultsSchema, messages: messagesSchema } },
    version: versionSchema,
  },
} as const;

/** One player's refusal inside a many-player answer (a batch, an acquire): the error envelope's fields, per player. */
const playerRefusalSchema = {
  type: 'object',
  required: ['userId', 'success', 'status', 'code', 'error'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    success: { const: false },
    status: { type: 'integer' },
    code: errorEnvelope.properties.code,
    error: { type: 'string' },
    version: versionSchema,
    data: { type: 'object' },
  },
} as const;

export const multiBatchResponse = successAnswer({
  type: 'object',
  required: ['players'],
  additionalProperties: false,
  properties: {
    players: {
      type: 'array',
      description: 'One per player, in order: applied (results, version) or refused (status, code, error).',
      items: {
        anyOf: [
          {
            type: 'object',
            required: ['userId', 'success', 'version', 'results'],
            additionalProperties: false,
            properties: { userId: { type: 'string' }, success, version: versionSchema, results: resultsSchema, messages: messagesSchema },
          },
          playerRefusalSchema,
        ],
      },
    },
  },
});

export const sessionResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: {
    success,
    data: {
      type: 'object',
      required: ['sessionId', 'userId', 'owner', 'expiresAt'],
      additionalProperties: false,
      properties: {
        sessionId: { type: 'string', description: 'Send it with every write while the session holds the player.' },
        userId: { type: 'string' },
        owner: { type: 'string' },
        expiresAt: { ...isoTimeSchema, description: "When the lease ends unless renewed (Redis's clock)." },
        values: { ...valuesSchema, description: 'With load: true, every key of the player ({} for a new player).' },
        messages: { ...messagesSchema, description: 'With load: true (acquire), every message waiting for the player, oldest first.' },
        metadata: {
          type: 'object',
          required: ['firstSessionAt', 'sessionCount'],
          additionalProperties: false,
          description: 'Acquire: what the service keeps of the player beside its data.',
          properties: {
            firstSessionAt: { ...isoTimeSchema, description: "When the player's first session was acquired." },
            sessionCount: { type: 'integer', minimum: 1, description: 'Sessions acquired so far, this one counted.' },
          },
        },
      },
    },
    version: versionSchema,
  },
} as const;

export const multiSessionResponse = successAnswer({
  type: 'object',
  required: ['players'],
  additionalProperties: false,
  properties: {
    players: {
      type: 'array',
      description: 'One per player, in order: its session (as a single acquire answers it, with its version), or its refusal.',
      items: {
        anyOf: [
          {
            type: 'object',
            required: ['userId', 'success', 'version', 'sessionId', 'owner', 'expiresAt'],
            additionalProperties: false,
            properties: {
              userId: { type: 'string' },
              success,
              version: versionSchema,
              sessionId: { type: 'string' },
              owner: { type: 'string' },
              expiresAt: isoTimeSchema,
              values: valuesSchema,
              messages: messagesSchema,
              metadata: { type: 'object' },
            },
          },
          playerRefusalSchema,
        ],
      },
    },
  },
});

export const sendMessageResponse = successAnswer({
  type: 'object',
  required: ['messageId', 'sentAt', 'expiresAt'],
  additionalProperties: false,
  properties: { messageId: { type: 'string' }, sentAt: isoTimeSchema, expiresAt: isoTimeSchema },
});

export const messagesResponse = successAnswer({
  type: 'object',
  required: ['messages'],
  additionalProperties: false,
  properties: { messages: { type: 'array', items: messageSchema, description: 'Waiting, oldest first.' } },
});

/** GET /data/versions: the admin history's page, in the envelope. */
export const versionsResponse = {
  type: 'object',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: { success, data: playerHistoryPage },
} as const;

/** GET /data/version: the whole player at one version the history lists. */
export const versionResponse = successAnswer({
  type: 'object',
  required: ['userId', 'version', 'currentVersion', 'data'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    version: { type: 'integer', minimum: 0 },
    currentVersion: { type: 'integer', minimum: 0, description: "The player's version now." },
    data: playerAtVersion.properties.data,
  },
});

export const releaseResponse = {
  type: 'object',
  required: ['success', 'data', 'version'],
  additionalProperties: false,
  properties: {
    success,
    data: {
      type: 'object',
      required: ['released'],
      additionalProperties: false,
      properties: { released: { type: 'boolean', description: 'Whether this call ended the session.' } },
    },
    version: versionSchema,
  },
} as const;

export const aliveResponse = {
  type: 'object',
  required: ['success', 'status'],
  additionalProperties: false,
  properties: { success, status: { const: 'alive' } },
} as const;

export const readyResponse = {
  type: 'object',
  required: ['success', 'status', 'redis'],
  additionalProperties: false,
  properties: {
    success,
    status: {
      enum: ['ready', 'degraded'],
      description: '`degraded`: some Redis masters do not answer this instance (one failing over), the others do; it still serves every player whose master answers.',
    },
    redis: {
      type: 'object',
      required: ['masters', 'answering', 'notAnswering'],
      additionalProperties: false,
      properties: {
        masters: { type: 'integer', minimum: 0, description: 'Redis masters this instance knows of (1 on a single server).' },
        answering: { type: 'integer', minimum: 0, description: 'Masters that answered this probe.' },
        notAnswering: { type: 'array', items: { type: 'string' }, description: '`host:port` of the masters that did not answer in REDIS_COMMAND_TIMEOUT_MS.' },
      },
    },
  },
} as const;

export const openApiResponse = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', description: 'The OpenAPI version, 3.1.0.' },
    info: { type: 'object', description: 'Title, version and description of the service.' },
    paths: { type: 'object', description: 'Every operation, by path.' },
  },
  description: 'This document.',
} as const;

export const metricsResponse = {
  type: 'string',
  description: 'Prometheus text exposition format.',
} as const;
