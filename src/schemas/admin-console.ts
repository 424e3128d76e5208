// JSON Schemas of the admin answers the console's overview, players list and bans page read
// (GET /overview, GET /workspaces/:id/players, GET /gate). Closed objects, as in
// admin-responses.ts: a new field fails the build until it is described here.

const timeSchema = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const nullableCount = { type: ['integer', 'null'], minimum: 0 } as const;
const gateMode = { type: 'string', enum: ['off', 'report', 'enforce'] } as const;

export const playerListRow = {
  type: 'object',
  required: ['userId', 'lastWriteAt', 'version', 'keys', 'bytes', 'session'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    lastWriteAt: { ...nullableTime, description: 'Last write the players list saw; null for a player written before the list existed (`pds player index`).' },
    version: count,
    keys: { ...nullableCount, description: 'Data keys; null for a player written before these counts existed.' },
    bytes: { ...nullableCount, description: 'Bytes of data (key names and stored entries).' },
    session: {
      type: ['object', 'null'],
      required: ['owner', 'expiresAt'],
      additionalProperties: false,
      properties: { owner: { type: 'string' }, expiresAt: timeSchema },
      description: 'The game server holding the player, if any.',
    },
  },
} as const;

export const playerList = {
  type: 'object',
  required: ['workspaceId', 'listed', 'players', 'next'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    listed: { ...count, description: 'Players on the players list.' },
    players: { type: 'array', items: playerListRow },
    next: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page; null on the last.' },
  },
} as const;

export const playerSearch = {
  type: 'object',
  required: ['userId', 'checked', 'workspaces', 'matches', 'next'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    checked: { ...count, description: 'Workspaces checked by this call.' },
    workspaces: { ...count, description: 'Workspaces in the installation.' },
    matches: {
      type: 'array',
      items: {
        type: 'object',
        required: ['workspaceId', 'name', 'lastWriteAt', 'version', 'keys', 'bytes', 'session'],
        additionalProperties: false,
        properties: { workspaceId: { type: 'string' }, name: { type: 'string' }, ...Object.fromEntries(Object.entries(playerListRow.properties).filter(([k]) => k !== 'userId')) },
      },
      description: 'The workspaces of those checked where the player has data, with its row as the players list shows it.',
    },
    next: { type: ['string', 'null'], description: 'Pass as `cursor` to check the next workspaces; null once every one is checked.' },
  },
} as const;

const minute = {
  type: 'object',
  required: ['at', 'requests', 'limited', 'errors', 'p50Ms', 'p99Ms'],
  additionalProperties: false,
  properties: {
    at: { ...timeSchema, description: 'Start of the minute (UTC).' },
    requests: count,
    limited: { ...count, description: '429 answers.' },
    errors: { ...count, description: '5xx answers.' },
    p50Ms: { type: ['number', 'null'], description: 'Median latency (ms), from a histogram; null without requests.' },
    p99Ms: { type: ['number', 'null'] },
  },
} as const;

const busyWorkspace = {
  type: 'object',
  required: ['workspaceId', 'name', 'value'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    name: { type: ['string', 'null'], description: 'null when the workspace was deleted since.' },
    value: { ...count, description: 'Requests in the last hour, or bytes stored.' },
  },
} as const;

const instance = {
  type: 'object',
  required: ['id', 'host', 'pid', 'startedAt', 'lastSeenAt', 'gateMode'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    host: { type: 'string' },
    pid: count,
    startedAt: timeSchema,
    lastSeenAt: timeSchema,
    gateMode,
  },
} as const;

const recentBan = {
  type: 'object',
  required: ['address', 'bannedAt', 'source', 'reasons'],
  additionalProperties: false,
  properties: {
    address: { type: 'string' },
    bannedAt: timeSchema,
    source: { type: 'string', enum: ['gate', 'operator'] },
    reasons: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const overview = {
  type: 'object',
  required: ['at', 'minutes', 'totals', 'memory', 'instances', 'busiestByRequests', 'busiestByStorage', 'nearQuota', 'recentBans', 'gateMode'],
  additionalProperties: false,
  properties: {
    at: timeSchema,
    minutes: { type: 'array', items: minute, description: 'The last 60 minutes, oldest first, every instance added up.' },
    totals: {
      type: 'object',
      required: ['requests', 'limited', 'errors', 'p50Ms', 'p99Ms'],
      additionalProperties: false,
      properties: minute.properties,
    },
    memory: {
      type: 'object',
      required: ['usedBytes', 'maxBytes', 'policy', 'nodes'],
      additionalProperties: false,
      properties: {
        usedBytes: count,
        maxBytes: { ...count, description: 'maxmemory, added up over the masters; 0 when none is set.' },
        policy: { type: 'string', description: 'maxmemory-policy (noeviction keeps player data safe).' },
        nodes: count,
      },
    },
    instances: { type: 'array', items: instance, description: 'Instances that reported within three STATS_FLUSH_MS.' },
    busiestByRequests: { type: 'array', items: busyWorkspace },
    busiestByStorage: { type: 'array', items: busyWorkspace },
    nearQuota: {
      type: 'array',
      description: 'Workspaces at or over 80% of their storage quota (what it weighs: bytes less history), fullest first, at most 20 (docs/safe-saves.md, "Size limits").',
      items: {
        type: 'object',
        required: ['workspaceId', 'name', 'plan', 'usedBytes', 'quotaBytes', 'percent'],
        additionalProperties: false,
        properties: {
          workspaceId: { type: 'string' },
          name: { type: 'string' },
          plan: { type: 'string', enum: ['free', 'pro'] },
          usedBytes: count,
          quotaBytes: count,
          percent: { type: 'number', description: 'usedBytes over quotaBytes, in percent with one decimal.' },
        },
      },
    },
    recentBans: { type: 'array', items: recentBan },
    gateMode: { ...gateMode, description: "This instance's GATE_MODE." },
  },
} as const;

export const gateState = {
  type: 'object',
  required: ['mode', 'meaning', 'checks', 'banMaxPerMinute'],
  additionalProperties: false,
  properties: {
    mode: gateMode,
    meaning: { type: 'string', description: 'What the mode does, in words.' },
    checks: {
      type: 'object',
      required: ['userAgent', 'robloxId', 'addressRanges'],
      additionalProperties: false,
      properties: { userAgent: { type: 'boolean' }, robloxId: { type: 'boolean' }, addressRanges: count },
    },
    banMaxPerMinute: count,
  },
} as const;
