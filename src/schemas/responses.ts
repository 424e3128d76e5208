// JSON Schemas of the public API's answers: the envelopes the OpenAPI document publishes and
// the test suite checks every received response against. Success envelopes are closed
// (additionalProperties: false), so a field added to an answer fails the build until it is
// described here.
import { ErrorCode } from '../errors.js';
import { keySchema, valueSchema } from './data.js';

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

const entrySchema = {
  type: 'object',
  required: ['key', 'value', 'updated_at'],
  additionalProperties: false,
  properties: { key: keySchema, value: valueSchema, updated_at: isoTimeSchema },
} as const;

export const entryResponse = {
  type: 'object',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: { success, data: entrySchema },
} as const;

export const allEntriesResponse = {
  type: 'object',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: {
    success,
    data: {
      type: 'object',
      minProperties: 1,
      additionalProperties: valueSchema,
      description: 'Every stored key of the player, mapped to its value.',
    },
  },
} as const;

export const getDataResponse = {
  description: 'One entry when `key` is given, otherwise every entry of the player.',
  anyOf: [entryResponse, allEntriesResponse],
} as const;

export const incrementResponse = {
  type: 'object',
  required: ['success', 'value'],
  additionalProperties: false,
  properties: { success, value: { type: 'number', description: 'The value after the addition.' } },
} as const;

export const deleteResponse = {
  type: 'object',
  required: ['success', 'data'],
  additionalProperties: false,
  properties: {
    success,
    data: {
      type: 'object',
      required: ['deleted'],
      additionalProperties: false,
      properties: { deleted: { type: 'integer', minimum: 0, description: 'How many keys were removed.' } },
    },
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
  required: ['success', 'status'],
  additionalProperties: false,
  properties: { success, status: { const: 'ready' } },
} as const;

export const openApiResponse = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  description: 'This document.',
} as const;

export const metricsResponse = {
  type: 'string',
  description: 'Prometheus text exposition format.',
} as const;
