// JSON Schemas of the admin API's leaderboard routes (admin/leaderboards.ts): requests and the
// `data` of their answers.
import { PERIODS } from '../domain/periods.js';
import { keySchema } from './data.js';
import { boardParam, MAX_AROUND } from './leaderboards.js';

export { boardParam };

export const adminBoardPageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    period: { type: 'string', enum: [...PERIODS], description: 'all (default), daily, weekly or monthly.' },
    previous: { type: 'string', enum: ['true', 'false'], description: 'true: the period before the current one.' },
    order: { type: 'string', enum: ['desc', 'asc'], description: 'desc (default) or asc.' },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$', description: 'Entries a page, 1-100; default 20.' },
    after: { type: 'string', maxLength: 200, description: 'The `next` of the previous page.' },
  },
} as const;

/** GET .../entries/:userId: the period and order as for a page, and the entries around. */
export const adminBoardRankQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    period: adminBoardPageQuery.properties.period,
    previous: adminBoardPageQuery.properties.previous,
    order: adminBoardPageQuery.properties.order,
    around: { type: 'string', pattern: '^[0-9]{1,2}$', description: `Entries shown above and below the player, 0-${MAX_AROUND}; default 0.` },
  },
} as const;

export const updateBoardBody = {
  type: 'object',
  minProperties: 1,
  additionalProperties: false,
  properties: {
    periods: {
      type: 'array',
      minItems: 1,
      maxItems: PERIODS.length,
      items: { type: 'string', enum: [...PERIODS] },
      description: 'The periods every write of the board goes to.',
    },
    follow: { anyOf: [keySchema, { type: 'null' }], description: 'The player key the board follows, or null for none.' },
  },
} as const;

const count = { type: 'integer', minimum: 0 } as const;
const periodName = { type: 'string', enum: [...PERIODS] } as const;

export const boardRecord = {
  type: 'object',
  required: ['board', 'periods', 'createdAt'],
  additionalProperties: false,
  properties: {
    board: { type: 'string' },
    periods: { type: 'array', items: periodName },
    follow: { type: 'object', required: ['key'], additionalProperties: false, properties: { key: { type: 'string' } } },
    createdAt: { type: 'string' },
    backfilled: { type: 'integer', minimum: 0, description: 'After a follow: the players on the players list whose stored value was put on the board.' },
  },
} as const;

export const boardList = {
  type: 'array',
  items: {
    ...boardRecord,
    required: [...boardRecord.required, 'entries'],
    properties: {
      ...boardRecord.properties,
      entries: {
        type: 'array',
        description: 'Entries now in each period the board keeps (the current one).',
        items: {
          type: 'object',
          required: ['period', 'id', 'entries'],
          additionalProperties: false,
          properties: { period: periodName, id: { type: 'string' }, entries: count },
        },
      },
    },
  },
} as const;

export const adminBoardPage = {
  type: 'object',
  required: ['board', 'period', 'periodId', 'entries', 'next'],
  additionalProperties: false,
  properties: {
    board: { type: 'string' },
    period: periodName,
    periodId: { type: 'string' },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['rank', 'userId', 'score'],
        additionalProperties: false,
        properties: { rank: { type: 'integer', minimum: 1 }, userId: { type: 'string' }, score: { type: 'number' } },
      },
    },
    next: { type: ['string', 'null'] },
  },
} as const;

const entryItem = adminBoardPage.properties.entries.items;

export const adminBoardRank = {
  type: 'object',
  required: ['board', 'period', 'periodId', 'userId', 'rank', 'score', 'entries'],
  additionalProperties: false,
  properties: {
    board: { type: 'string' },
    period: periodName,
    periodId: { type: 'string' },
    userId: { type: 'string' },
    rank: { type: 'integer', minimum: 1, description: '1 is the best in the order asked for.' },
    score: { type: 'number' },
    entries: { type: 'array', items: entryItem, description: 'The entries around the player (the player among them); empty without `around`.' },
  },
} as const;

export const boardRemoval = {
  type: 'object',
  required: ['board', 'removed'],
  additionalProperties: false,
  properties: { board: { type: 'string' }, removed: { ...count, description: 'Entries removed over every period.' } },
} as const;

export const boardEntryRemoval = {
  type: 'object',
  required: ['board', 'userId', 'deleted'],
  additionalProperties: false,
  properties: { board: { type: 'string' }, userId: { type: 'string' }, deleted: { type: 'integer', minimum: 0, maximum: 1 } },
} as const;
