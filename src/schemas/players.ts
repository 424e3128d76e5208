// JSON Schemas of GET /api/v1/players (the workspace's players, store/workspaces/player-pages.ts):
// its query and its answer, shared by validation and the OpenAPI document.
import { keySchema } from './data.js';
import { successAnswer } from './envelope.js';

export const playersQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    prefix: {
      type: 'string',
      pattern: '^[A-Za-z0-9_.-]{1,64}$',
      description: 'Only players whose user id starts with this: 1-64 characters from A-Z a-z 0-9 _ . -.',
    },
    hasKey: { ...keySchema, description: 'Only players holding this data key (1-128 characters, no control characters).' },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'Most players a page, 1-1000 (default 100); a page may hold fewer, even none, before the last.' },
    cursor: { type: 'string', minLength: 1, maxLength: 100, description: 'The `next` of the page before (with the same prefix and hasKey).' },
  },
} as const;

export const playersResponse = successAnswer({
  type: 'object',
  required: ['players', 'next'],
  additionalProperties: false,
  properties: {
    players: {
      type: 'array',
      items: {
        type: 'object',
        required: ['userId', 'lastWriteAt'],
        additionalProperties: false,
        properties: {
          userId: { type: 'string' },
          lastWriteAt: {
            type: 'string',
            format: 'date-time',
            pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
            description: 'When the players list last saw the player written (ISO 8601 UTC).',
          },
        },
      },
    },
    next: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null once every player was walked.' },
  },
});
