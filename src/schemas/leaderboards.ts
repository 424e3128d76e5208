// JSON Schemas of the leaderboard endpoints (docs/leaderboards.md): the requests ajv validates
// and the answers the OpenAPI document publishes, from the same objects.
import { BOARD_NAME_PATTERN_SOURCE } from '../domain/leaderboard.js';
import { PERIODS } from '../domain/periods.js';
import { userIdQuerySchema, userIdSchema } from './data.js';
import { successAnswer } from './envelope.js';

export const MAX_PAGE_ENTRIES = 100;
export const MAX_AROUND = 50;

export const boardParam = {
  board: {
    type: 'string',
    pattern: BOARD_NAME_PATTERN_SOURCE,
    description: 'The board: 1-64 characters from A-Z a-z 0-9 _ . - (a board starts with its first write).',
  },
} as const;

export const boardPlayerParams = {
  ...boardParam,
  userId: { ...userIdQuerySchema, description: "The player's user id." },
} as const;

const scoreSchema = {
  type: 'number',
  description: 'A finite number; integers are exact up to 2^53.',
} as const;

export const setScoreBody = {
  type: 'object',
  required: ['userId', 'score'],
  additionalProperties: false,
  properties: { userId: userIdSchema, score: { ...scoreSchema, description: "The player's new score in every period the board keeps." } },
} as const;

export const incrementScoreBody = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: {
    userId: userIdSchema,
    amount: { type: 'number', description: 'Added to the score in every period the board keeps (default 1); a player new to a period starts at 0.' },
  },
} as const;

export const deleteScoreBody = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: { userId: userIdSchema },
} as const;

const periodQuery = {
  period: { type: 'string', enum: [...PERIODS], description: 'Which period of the board: all (default), daily, weekly or monthly (UTC).' },
  previous: {
    type: 'string',
    enum: ['true', 'false'],
    description: 'true: the period before the current one (readable until the next boundary). Not for all.',
  },
  order: {
    type: 'string',
    enum: ['desc', 'asc'],
    description: 'desc (default): highest score first, ties by who reached the score first; asc: the exact reverse.',
  },
} as const;

/** A number as a query parameter: JSON's number syntax. */
const numberText = { type: 'string', pattern: '^-?(0|[1-9]\\d*)(\\.\\d+)?([eE][-+]?\\d+)?$' } as const;

export const boardPageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[1-9]\\d{0,2}$', description: `Entries a page, 1-${MAX_PAGE_ENTRIES} (default 10).` },
    after: { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$', description: 'The `next` of the previous page.' },
    min: { ...numberText, description: 'Only scores at or above this.' },
    max: { ...numberText, description: 'Only scores at or below this.' },
    ...periodQuery,
  },
} as const;

export const boardPlayerQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    around: { type: 'string', pattern: '^\\d{1,2}$', description: `Entries to show above and below the player, 0-${MAX_AROUND} (default 0).` },
    ...periodQuery,
  },
} as const;

// --- answers ---

const isoTime = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' } as const;

export const boardEntrySchema = {
  type: 'object',
  required: ['rank', 'userId', 'score'],
  additionalProperties: false,
  properties: {
    rank: { type: 'integer', minimum: 1, description: 'Place in the whole period, in the order asked, when the page was read.' },
    userId: { type: 'string' },
    score: { type: 'number' },
  },
} as const;

const periodSchema = {
  type: 'object',
  required: ['name', 'id', 'startsAt', 'endsAt'],
  additionalProperties: false,
  description: 'The period read, for daily, weekly and monthly: its id and UTC bounds (endsAt excluded).',
  properties: {
    name: { type: 'string', enum: ['daily', 'weekly', 'monthly'] },
    id: { type: 'string', description: '2026-11-25, 2026-W48 (ISO week), 2026-11.' },
    startsAt: isoTime,
    endsAt: isoTime,
  },
} as const;

export const boardPageResponse = successAnswer({
  type: 'object',
  required: ['entries', 'next'],
  additionalProperties: false,
  properties: {
    entries: { type: 'array', maxItems: MAX_PAGE_ENTRIES, items: boardEntrySchema },
    next: { type: ['string', 'null'], description: 'Pass as `after` for the next page; null on the last page.' },
    period: periodSchema,
  },
});

export const boardPlayerResponse = successAnswer({
  type: 'object',
  required: ['userId', 'rank', 'score'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    rank: { type: 'integer', minimum: 1 },
    score: { type: 'number' },
    entries: { type: 'array', items: boardEntrySchema, description: 'With around: the player and up to that many entries above and below.' },
    period: periodSchema,
  },
});

export const boardScoreResponse = successAnswer({
  type: 'object',
  required: ['userId', 'score', 'scores'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    score: { type: 'number', description: 'The new score: all-time, or the longest period the board keeps.' },
    scores: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(PERIODS.map((p) => [p, { type: 'number' }])),
      description: 'The new score in each period the board keeps.',
    },
  },
});

export const boardDeleteResponse = successAnswer({
  type: 'object',
  required: ['deleted'],
  additionalProperties: false,
  properties: { deleted: { type: 'integer', minimum: 0, maximum: 1, description: '1 when the player was on the board.' } },
});
