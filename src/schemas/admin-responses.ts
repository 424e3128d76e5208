// JSON Schemas of the admin API's answers (bodies inside the success envelope's `data`),
// following the return types of AdminOperations and BanOperations. Closed objects: a new
// field in an admin answer fails the build until it is described here.

const planSchema = { type: 'string', enum: ['free', 'pro'] } as const;
const timeSchema = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const scopeSchema = { type: 'string', enum: ['read', 'write'] } as const;
const count = { type: 'integer', minimum: 0 } as const;
const anyValue = { description: 'Any JSON value, as stored.' } as const;

export const workspaceRecord = {
  type: 'object',
  required: ['id', 'name', 'plan', 'createdAt'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, name: { type: 'string' }, plan: planSchema, createdAt: timeSchema },
} as const;

export const workspaceList = { type: 'array', items: workspaceRecord } as const;

/** A key as operators see it (KeyView): never the raw key. */
export const keyView = {
  type: 'object',
  required: ['keyId', 'workspaceId', 'prefix', 'label', 'scope', 'status', 'createdAt', 'expiresAt', 'lastUsedAt', 'dev'],
  additionalProperties: false,
  properties: {
    keyId: { type: 'string' },
    workspaceId: { type: 'string' },
    prefix: { type: 'string', description: 'The first characters of the key, safe to show.' },
    label: { type: ['string', 'null'] },
    scope: scopeSchema,
    status: {
      type: 'string',
      enum: ['active', 'revoked', 'expired'],
      description: '`expired`: an active key past its expiry, refused like a revoked one.',
    },
    createdAt: timeSchema,
    expiresAt: nullableTime,
    lastUsedAt: { ...nullableTime, description: 'Written in batches (KEY_LAST_USED_FLUSH_MS), so a few seconds behind.' },
    dev: { type: 'boolean', description: 'Marked as a development key (POST /keys/:keyId/dev).' },
  },
} as const;

export const keyViewList = { type: 'array', items: keyView } as const;

export const storageView = {
  type: 'object',
  required: ['bytes', 'players', 'historyBytes', 'boardBytes', 'keptBytes', 'messageBytes', 'sessionBytes', 'quotaBytes', 'quotaUsedBytes', 'quotaPercent', 'dataRedisBytes'],
  additionalProperties: false,
  description:
    "Bytes the workspace stores (players' data and history, leaderboard entries, answers kept for Idempotency-Keys, waiting messages, players held by sessions before they have data) and players with data, as the instances last added them up (within STORAGE_FLUSH_MS), and the plan's quota.",
  properties: {
    bytes: { type: 'integer', description: 'Everything counted: the players\' data and history, boardBytes, keptBytes, messageBytes and sessionBytes. The quota weighs quotaUsedBytes.' },
    players: { type: 'integer' },
    historyBytes: {
      type: 'integer',
      description: "The part of bytes that is players' history (restore points): not weighed by the quota, kept within HISTORY_QUOTA_SHARE of it (docs/history.md).",
    },
    boardBytes: { type: 'integer', description: 'Leaderboard entries (docs/leaderboards.md).' },
    keptBytes: { type: 'integer', description: 'Answers kept for Idempotency-Keys that may still be alive (docs/safe-saves.md).' },
    messageBytes: { type: 'integer', description: 'Messages waiting for players (docs/safe-saves.md, "Messages to players").' },
    sessionBytes: {
      type: 'integer',
      description: 'Players held by sessions before they have any data, as Redis holds them, from the acquire until the release, the first data or the lease\'s end (docs/safe-saves.md, "Size limits").',
    },
    quotaBytes: { type: 'integer', minimum: 0 },
    quotaUsedBytes: {
      type: 'integer',
      description: 'What the quota weighs, in Redis bytes: dataRedisBytes, boardBytes, keptBytes, messageBytes and sessionBytes; not history. A save is weighed without sessionBytes (docs/safe-saves.md, "Size limits").',
    },
    dataRedisBytes: {
      type: 'integer',
      description:
        "The Redis memory the players' data takes, estimated from the counted bytes: 1.2 x the data's bytes + 150 B a player, within ±20% of MEMORY USAGE for typical players (docs/safe-saves.md, \"Size limits\").",
    },
    quotaPercent: {
      type: 'number',
      description: 'quotaUsedBytes over quotaBytes in percent, one decimal: the console warns at 80 and 95 (docs/safe-saves.md, "Size limits").',
    },
  },
} as const;

export const workspaceDetails = {
  type: 'object',
  required: [...workspaceRecord.required, 'keys', 'storage'],
  additionalProperties: false,
  properties: { ...workspaceRecord.properties, keys: keyViewList, storage: storageView },
} as const;

/** A key just issued (CreatedKey): the only answer that carries the raw key. */
export const createdKeyRecord = {
  type: 'object',
  required: ['keyId', 'apiKey', 'workspaceId', 'prefix', 'scope', 'label', 'expiresAt'],
  additionalProperties: false,
  properties: {
    keyId: { type: 'string' },
    apiKey: { type: 'string', description: 'The raw key: shown once, here, and never stored.' },
    workspaceId: { type: 'string' },
    prefix: { type: 'string' },
    scope: scopeSchema,
    label: { type: ['string', 'null'] },
    expiresAt: nullableTime,
  },
} as const;

export const createdWorkspaceRecord = {
  type: 'object',
  required: ['workspaceId', 'name', 'plan', 'keyId', 'apiKey'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    plan: planSchema,
    keyId: { type: 'string' },
    apiKey: createdKeyRecord.properties.apiKey,
  },
} as const;

export const rotatedKey = {
  type: 'object',
  required: ['key', 'previous'],
  additionalProperties: false,
  properties: {
    key: { ...createdKeyRecord, description: 'The new key, with the old one\'s scope and label.' },
    previous: { ...keyView, description: 'The old key after the rotation: revoked, or active until its new expiry.' },
  },
} as const;

/** The stored key record (ApiKeyRecord), as the development-key switch answers it. */
export const apiKeyRecord = {
  type: 'object',
  required: ['keyId', 'workspaceId', 'status', 'scope', 'prefix', 'createdAt'],
  additionalProperties: false,
  properties: {
    keyId: { type: 'string' },
    workspaceId: { type: 'string' },
    status: { type: 'string', enum: ['active', 'revoked'] },
    scope: scopeSchema,
    prefix: { type: 'string', description: 'The first characters of the key, safe to show.' },
    createdAt: timeSchema,
    expiresAt: timeSchema,
    label: { type: 'string' },
    dev: { type: 'boolean', description: 'A development key: the editor\'s play-tests may use it.' },
  },
} as const;

export const deletedWorkspace = {
  type: 'object',
  required: ['workspaceId', 'keysDeleted', 'playersDeleted'],
  additionalProperties: false,
  properties: { workspaceId: { type: 'string' }, keysDeleted: count, playersDeleted: count },
} as const;

/** GET /workspaces/{id}/export: NDJSON, not JSON (one line of it parses as JSON, so no type is given). */
export const workspaceExport = {
  description: 'NDJSON, one player a line: {"userId","version","data":{"<key>":{"value","updated_at"}}} (docs/backups.md).',
} as const;

export const importSummary = {
  type: 'object',
  required: ['workspaceId', 'mode', 'complete', 'lines', 'imported', 'replaced', 'unchanged', 'skipped', 'failed', 'erased', 'boards', 'errors', 'bytes', 'ms'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    mode: { type: 'string', enum: ['skip', 'overwrite', 'fail'] },
    complete: { type: 'boolean', description: 'False when mode fail found an existing player or a bad line, and so wrote nothing.' },
    lines: count,
    imported: count,
    replaced: count,
    unchanged: count,
    skipped: count,
    failed: count,
    erased: { ...count, description: 'Players not imported because they were erased after the export (a tombstone in the workspace; docs/erasure.md).' },
    boards: {
      type: 'object',
      required: ['imported', 'replaced', 'skipped', 'entries', 'erased'],
      additionalProperties: false,
      description: 'Leaderboards: loaded as new, replaced (overwrite), kept as they were (skip), the entries loaded, and the entries not loaded because their player was erased.',
      properties: { imported: count, replaced: count, skipped: count, entries: count, erased: count },
    },
    errors: {
      type: 'array',
      description: 'One entry per refused line (the first 1000).',
      items: {
        type: 'object',
        required: ['line', 'code', 'error'],
        additionalProperties: false,
        properties: { line: { type: 'integer', minimum: 1 }, userId: { type: 'string' }, code: { type: 'string' }, error: { type: 'string' } },
      },
    },
    bytes: count,
    ms: count,
  },
} as const;

export const usageReport = {
  type: 'object',
  required: ['workspaceId', 'name', 'plan', 'days', 'totals', 'players', 'keys'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    name: { type: 'string' },
    plan: planSchema,
    days: {
      type: 'array',
      description: 'Newest first, one entry per UTC day, days without traffic as zeros.',
      items: {
        type: 'object',
        required: ['date', 'requests', 'limited'],
        additionalProperties: false,
        properties: {
          date: { type: 'string', format: 'date' },
          requests: count,
          limited: { ...count, description: 'Requests refused with 429.' },
        },
      },
    },
    totals: {
      type: 'object',
      required: ['requests', 'limited'],
      additionalProperties: false,
      properties: { requests: count, limited: count },
    },
    players: { ...count, description: 'Players with data, counted by SCAN when asked.' },
    keys: keyViewList,
  },
} as const;

export const playerEntry = {
  type: 'object',
  required: ['key', 'value', 'updated_at', 'version'],
  additionalProperties: false,
  properties: { key: { type: 'string' }, value: anyValue, updated_at: timeSchema, version: { type: 'integer', minimum: 0 } },
} as const;

export const playerExport = {
  type: 'object',
  required: ['workspaceId', 'userId', 'exportedAt', 'version', 'data'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    exportedAt: timeSchema,
    version: { type: 'integer', minimum: 0 },
    data: {
      type: 'object',
      description: 'Every key of the player with its value and the time it was last written.',
      additionalProperties: {
        type: 'object',
        required: ['value', 'updated_at'],
        additionalProperties: false,
        properties: { value: anyValue, updated_at: timeSchema },
      },
    },
  },
} as const;

/** GET answers one entry with ?key=, the whole export without. */
export const playerRead = { oneOf: [playerEntry, playerExport] } as const;

export const deletedCount = {
  type: 'object',
  required: ['deleted', 'version'],
  additionalProperties: false,
  properties: { deleted: count, version: { type: 'integer', minimum: 0 } },
} as const;

export const playerSessionView = {
  type: 'object',
  required: ['userId', 'version', 'session'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    version: { type: 'integer', minimum: 0 },
    session: {
      description: 'The live session holding the player, or null.',
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['sessionId', 'owner', 'expiresAt'],
          additionalProperties: false,
          properties: { sessionId: { type: 'string' }, owner: { type: 'string' }, expiresAt: timeSchema },
        },
      ],
    },
  },
} as const;

export const releasedSession = {
  type: 'object',
  required: ['released', 'sessionId', 'owner'],
  additionalProperties: false,
  properties: { released: { type: 'boolean' }, sessionId: { type: 'string' }, owner: { type: 'string' } },
} as const;

const nullableString = { type: ['string', 'null'] } as const;
const versionNumber = { type: 'integer', minimum: 0 } as const;

export const playerHistoryPage = {
  type: 'object',
  required: ['userId', 'version', 'versions', 'nextBefore'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    version: { ...versionNumber, description: "The player's current version." },
    versions: {
      type: 'array',
      description: 'The versions that can be read and restored, newest first.',
      items: {
        type: 'object',
        required: ['version', 'time', 'kind', 'by', 'keys'],
        additionalProperties: false,
        properties: {
          version: versionNumber,
          time: { ...nullableTime, description: 'When the write that made this version ran; null for the oldest version retained (its write is older than the history) and for version 0.' },
          kind: { ...nullableString, description: 'The kind of write: set, increment, delete, batch, admin-set, admin-delete, restore, ...' },
          by: { ...nullableString, description: 'Who wrote: `key:<API key id>` or `admin:<actor>`.' },
          keys: { type: ['array', 'null'], items: { type: 'string' }, description: 'The keys the write changed.' },
        },
      },
    },
    nextBefore: { type: ['integer', 'null'], minimum: 0, description: 'Pass as `before` for the next page; null on the last page.' },
  },
} as const;

const adminMessage = {
  type: 'object',
  required: ['id', 'message', 'sentAt', 'expiresAt'],
  additionalProperties: false,
  properties: { id: { type: 'string' }, message: anyValue, sentAt: timeSchema, expiresAt: timeSchema },
} as const;

export const playerMessages = {
  type: 'object',
  required: ['userId', 'messages'],
  additionalProperties: false,
  properties: { userId: { type: 'string' }, messages: { type: 'array', items: adminMessage, description: 'Waiting, oldest first.' } },
} as const;

export const sentPlayerMessage = {
  type: 'object',
  required: ['userId', 'messageId', 'sentAt', 'expiresAt'],
  additionalProperties: false,
  properties: { userId: { type: 'string' }, messageId: { type: 'string' }, sentAt: timeSchema, expiresAt: timeSchema },
} as const;

export const deletedMessages = {
  type: 'object',
  required: ['userId', 'deleted'],
  additionalProperties: false,
  properties: { userId: { type: 'string' }, deleted: { ...count, description: 'Messages deleted.' } },
} as const;

export const playerAtVersion = {
  type: 'object',
  required: ['workspaceId', 'userId', 'version', 'currentVersion', 'data'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    userId: { type: 'string' },
    version: versionNumber,
    currentVersion: versionNumber,
    data: { ...playerExport.properties.data, description: 'Every key the player had at that version, with its value and updated_at then.' },
  },
} as const;

export const restoredPlayer = {
  type: 'object',
  required: ['userId', 'restoredFrom', 'version', 'set', 'deleted', 'endedSession'],
  additionalProperties: false,
  properties: {
    userId: { type: 'string' },
    restoredFrom: versionNumber,
    version: { ...versionNumber, description: 'The new version the restore made.' },
    set: { ...count, description: 'Keys written back.' },
    deleted: { ...count, description: 'Keys deleted (absent at that version).' },
    endedSession: {
      description: "The game server's session that force ended, or null.",
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['sessionId', 'owner'],
          additionalProperties: false,
          properties: { sessionId: { type: 'string' }, owner: { type: 'string' } },
        },
      ],
    },
  },
} as const;

export const auditEntryList = {
  type: 'array',
  description: 'Newest first.',
  items: {
    type: 'object',
    required: ['at', 'actor', 'action', 'target'],
    additionalProperties: false,
    properties: {
      at: timeSchema,
      actor: { type: 'string', description: '`cli:<os user>` or `admin-api`.' },
      action: { type: 'string', description: 'e.g. `workspace.delete`, `key.rotate`, `player.export`.' },
      target: { type: 'string', description: 'e.g. `workspace:ws_x`, `key:key_y`, `player:ws_x/42`.' },
      workspaceId: { type: 'string' },
      details: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
    },
  },
} as const;

// --- platform-only access ---

const evidence = {
  type: 'object',
  description: 'What the request looked like: enough to judge a ban later, never an API key.',
  required: ['method', 'path', 'headerNames', 'headers'],
  additionalProperties: false,
  properties: {
    method: { type: 'string' },
    path: { type: 'string' },
    userAgent: { type: 'string' },
    robloxId: { type: 'string' },
    headerNames: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 32 },
    headerCount: { type: 'integer', description: 'How many headers the request had, when more than headerNames lists.' },
    headerNamesCut: { type: 'integer', description: 'How many of the listed names were cut to 40 characters.' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    workspaceId: { type: 'string' },
    keyId: { type: 'string' },
    instance: { type: 'string' },
  },
} as const;

const violationReason = {
  type: 'string',
  enum: ['user-agent', 'roblox-id', 'address', 'address-unknown', 'editor-production-key'],
} as const;

export const banRecord = {
  type: 'object',
  required: ['address', 'bannedAt', 'source', 'reasons'],
  additionalProperties: false,
  properties: {
    address: { type: 'string', description: 'An IPv4 address, or an IPv6 /64 as `network/64`.' },
    bannedAt: timeSchema,
    source: { type: 'string', enum: ['gate', 'operator'], description: '`gate`: banned automatically on a violation.' },
    reasons: { type: 'array', items: { type: 'string' } },
    note: { type: 'string' },
    evidence,
  },
} as const;

export const banPage = {
  type: 'object',
  required: ['bans', 'next'],
  additionalProperties: false,
  properties: {
    bans: { type: 'array', items: banRecord },
    next: {
      type: ['string', 'null'],
      description: 'Pass as `after` for the next page; null on the last page.',
    },
  },
} as const;

const allowEntryProperties = {
  entry: { type: 'string', description: 'An address or a range, canonical `network/bits`.' },
  addedAt: timeSchema,
  note: { type: 'string' },
} as const;

export const allowEntryList = {
  type: 'array',
  items: { type: 'object', required: ['entry', 'addedAt'], additionalProperties: false, properties: allowEntryProperties },
} as const;

export const allowedEntry = {
  type: 'object',
  required: ['entry', 'addedAt', 'lifted'],
  additionalProperties: false,
  properties: {
    ...allowEntryProperties,
    lifted: { type: 'array', items: { type: 'string' }, description: 'Bans the entry covered, now lifted.' },
  },
} as const;

export const removedAllowEntry = {
  type: 'object',
  required: ['entry'],
  additionalProperties: false,
  properties: { entry: { type: 'string' } },
} as const;

export const violationList = {
  type: 'array',
  description: 'Newest first.',
  items: {
    type: 'object',
    required: ['at', 'reasons', 'mode', 'outcome', 'evidence'],
    additionalProperties: false,
    properties: {
      at: timeSchema,
      address: { type: 'string', description: 'Absent when the client address could not be determined.' },
      reasons: { type: 'array', items: violationReason },
      mode: { type: 'string', enum: ['off', 'report', 'enforce'] },
      outcome: { type: 'string', enum: ['reported', 'banned', 'refused'] },
      notBanned: { type: 'string', description: 'Why the violation did not lead to a ban.' },
      evidence,
    },
  },
} as const;
