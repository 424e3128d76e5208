// JSON Schemas of the erasure side of the admin API: requests, queries and answers, shared by
// validation and the OpenAPI document.

const userId = {
  type: ['integer', 'string'],
  description: "The player's user id: a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -.",
} as const;

export const eraseBody = {
  type: 'object',
  required: ['userId'],
  additionalProperties: false,
  properties: {
    userId,
    workspaceId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'Erase the player in this workspace.' },
    allWorkspaces: { const: true, description: 'Erase the player in every workspace instead.' },
  },
} as const;

export const erasureListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    state: { type: 'string', enum: ['pending', 'failed', 'unmapped', 'done'], description: 'Only jobs in this state.' },
    user: { type: 'string', minLength: 1, maxLength: 64, description: "Only this user's jobs (the id is turned into its digest, never stored)." },
    limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'Jobs in the answer, 1-500 (default 50), newest first.' },
  },
} as const;

export const jobIdParam = { type: 'string', description: 'An erasure job id (er_...).' } as const;

export const gamesBody = {
  type: 'object',
  required: ['gameIds'],
  additionalProperties: false,
  properties: {
    gameIds: {
      type: 'array',
      maxItems: 1000,
      items: { type: ['integer', 'string'] },
      description: "The platform's game (universe) ids this workspace serves, replacing its list; [] for none.",
    },
  },
} as const;

const templates = {
  type: 'array',
  maxItems: 10,
  items: { type: 'string', maxLength: 100 },
  description:
    'Templates of the players an erasure of a user id also erases in the workspace, each holding {userId} once (Player_{userId}: user 42\'s ' +
    'Player_42), around it only A-Z a-z 0-9 _ . - and not digits alone; the player of the user id itself is always erased. docs/erasure.md.',
} as const;

export const erasurePlayersBody = {
  type: 'object',
  required: ['templates'],
  additionalProperties: false,
  properties: { templates: { ...templates, description: `${templates.description} Replaces the list; [] for none.` } },
} as const;

export const workspaceErasurePlayers = {
  type: 'object',
  required: ['workspaceId', 'templates'],
  additionalProperties: false,
  properties: { workspaceId: { type: 'string' }, templates },
} as const;

const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const ids = { type: 'array', items: { type: 'string' } } as const;

export const erasureJob = {
  type: 'object',
  required: ['jobId', 'state', 'source', 'requestedBy', 'requestedAt', 'user', 'scope', 'notificationId', 'workspaces', 'unmappedGames', 'progress', 'attempts', 'lastError', 'nextAttemptAt', 'doneAt'],
  additionalProperties: false,
  properties: {
    jobId: { type: 'string' },
    state: {
      type: 'string',
      enum: ['pending', 'failed', 'unmapped', 'done'],
      description: 'pending: to run or running; failed: the last attempt failed, retried at nextAttemptAt; unmapped: erased where it could, waits for a game to be mapped; done.',
    },
    source: { type: 'string', enum: ['webhook', 'cli', 'admin-api', 'console'] },
    requestedBy: { type: 'string' },
    requestedAt: { type: 'string', format: 'date-time' },
    user: { type: 'string', description: 'The keyed digest of the user id (never the id).' },
    scope: {
      oneOf: [
        { type: 'object', required: ['workspaceId'], additionalProperties: false, properties: { workspaceId: { type: 'string' } } },
        { type: 'object', required: ['allWorkspaces'], additionalProperties: false, properties: { allWorkspaces: { const: true } } },
        { type: 'object', required: ['gameIds'], additionalProperties: false, properties: { gameIds: ids } },
      ],
    },
    notificationId: { type: ['string', 'null'] },
    workspaces: { ...ids, description: 'The workspaces the player is erased in, once the job has started.' },
    unmappedGames: { ...ids, description: 'Games of the request no workspace serves.' },
    progress: {
      type: 'object',
      required: ['phase', 'workspacesTotal', 'workspacesDone', 'keysDeleted'],
      additionalProperties: false,
      properties: {
        phase: { type: 'string', enum: ['waiting', 'tombstones', 'keys', 'places', 'finished'] },
        workspacesTotal: count,
        workspacesDone: count,
        keysDeleted: count,
      },
    },
    attempts: count,
    lastError: { type: ['string', 'null'] },
    nextAttemptAt: nullableTime,
    doneAt: nullableTime,
  },
} as const;

export const erasureCounts = {
  type: 'object',
  required: ['requested', 'done', 'pending', 'failed', 'unmapped'],
  additionalProperties: false,
  properties: {
    requested: { ...count, description: 'Jobs ever recorded (a repeated notification is not).' },
    done: { ...count, description: 'Jobs ever finished.' },
    pending: { ...count, description: 'Jobs now waiting to run or running.' },
    failed: { ...count, description: 'Jobs whose last attempt failed, to be retried.' },
    unmapped: { ...count, description: 'Jobs waiting for a game to be mapped to a workspace.' },
  },
} as const;

export const erasureList = {
  type: 'object',
  required: ['counts', 'jobs'],
  additionalProperties: false,
  properties: { counts: erasureCounts, jobs: { type: 'array', items: erasureJob } },
} as const;

export const workspaceGames = {
  type: 'object',
  required: ['workspaceId', 'gameIds', 'requeued'],
  additionalProperties: false,
  properties: {
    workspaceId: { type: 'string' },
    gameIds: ids,
    requeued: { ...ids, description: 'Erasure jobs that waited for one of these games and run again now.' },
  },
} as const;
