// JSON Schemas of the admin API's platform-only access bodies and queries.
export const addBanBody = {
  type: 'object',
  required: ['address'],
  additionalProperties: false,
  properties: {
    address: { type: 'string', minLength: 1, maxLength: 100, description: 'IPv4 or IPv6 address.' },
    reason: { type: 'string', maxLength: 500, description: 'Why the operator bans it.' },
  },
} as const;

export const allowBody = {
  type: 'object',
  required: ['entry'],
  additionalProperties: false,
  properties: {
    entry: { type: 'string', minLength: 1, maxLength: 100, description: 'Address or range (CIDR).' },
    note: { type: 'string', maxLength: 500, description: 'Whose address this is.' },
  },
} as const;

export const keyDevBody = {
  type: 'object',
  required: ['dev'],
  additionalProperties: false,
  properties: {
    dev: { type: 'boolean', description: 'true: a development key the editor may use for play-tests.' },
  },
} as const;

export const violationsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'How many, newest first (default 50).' },
    address: { type: 'string', minLength: 1, maxLength: 100, description: 'Only this address.' },
  },
} as const;

export const bansQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'Bans per page, 1 to 1000 (default 100).' },
    after: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'Cursor: the `next` of the page before. Pages are in the order of the banned addresses.',
    },
  },
} as const;
