// JSON Schemas of the public data endpoints' inputs. Compiled once by http/validate.ts; the
// OpenAPI document is generated from these same objects.
import { USER_ID_PATTERN_SOURCE } from '../domain/ids.js';

export const KEY_MAX_LENGTH = 128;

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
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
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
  properties: { userId: userIdSchema, key: keySchema, value: valueSchema },
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
  },
} as const;

export const deleteBody = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: {
    userId: userIdSchema,
    key: { ...keySchema, description: 'Key to delete; omit it to delete all of the player\'s data.' },
  },
} as const;
