// JSON Schemas of the admin API's answers (bodies inside the success envelope's `data`).
// Closed objects: a new field in an admin answer fails the build until it is described here.

const planSchema = { type: 'string', enum: ['free', 'pro'] } as const;
const timeSchema = { type: 'string', format: 'date-time' } as const;

export const workspaceRecord = {
  type: 'object',
  required: ['id', 'name', 'plan', 'createdAt'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, name: { type: 'string' }, plan: planSchema, createdAt: timeSchema },
} as const;

export const createdKeyRecord = {
  type: 'object',
  required: ['keyId', 'apiKey', 'workspaceId'],
  additionalProperties: false,
  properties: {
    keyId: { type: 'string' },
    apiKey: { type: 'string', description: 'The raw key: shown once, here, and never stored.' },
    workspaceId: { type: 'string' },
  },
} as const;

export const createdWorkspaceRecord = {
  type: 'object',
  required: ['workspaceId', 'name', 'plan', 'keyId', 'apiKey'],
  additionalProperties: false,
  properties: {
    ...createdKeyRecord.properties,
    name: { type: 'string' },
    plan: planSchema,
  },
} as const;

export const apiKeyRecord = {
  type: 'object',
  required: ['keyId', 'workspaceId', 'status', 'scope', 'prefix', 'createdAt'],
  additionalProperties: false,
  properties: {
    keyId: { type: 'string' },
    workspaceId: { type: 'string' },
    status: { type: 'string', enum: ['active', 'revoked'] },
    scope: { type: 'string', enum: ['read', 'write'] },
    prefix: { type: 'string', description: 'The first characters of the key, safe to show.' },
    createdAt: timeSchema,
    expiresAt: timeSchema,
    label: { type: 'string' },
  },
} as const;

export const apiKeyList = { type: 'array', items: apiKeyRecord } as const;
