// The right to erasure's routes as the OpenAPI document describes them: the platform's webhook
// on the public listener, and the admin API's erasures, game mappings and erasure player names.
import {
  eraseBody,
  erasureJob,
  erasureList,
  erasureListQuery,
  erasurePlayersBody,
  gamesBody,
  jobIdParam,
  workspaceErasurePlayers,
  workspaceGames,
} from '../../schemas/erasure.js';
import { robloxNotificationDocument, webhookAnswer } from '../../schemas/roblox-webhook.js';
import { adminRoute, openRoute, type RouteSpec } from '../route-spec.js';

export const webhookRoutes: readonly RouteSpec[] = [
  {
    ...openRoute('post', '/api/v1/webhooks/roblox', "The platform's webhook: a right-to-erasure request, recorded and answered at once", 'webhooks', {
      body: robloxNotificationDocument,
      ok: webhookAnswer,
      errors: [400, 401, 403, 404, 409, 413, 415, 429, 500, 503],
      errorText: {
        400: 'Malformed JSON, or a notification or erasure payload without its fields (a valid signature, but not a notification).',
        401: 'The roblox-signature header is missing or malformed, its timestamp is older than ROBLOX_WEBHOOK_MAX_AGE_SECONDS or in the future, or the signature does not match the body.',
        403: 'Only while the webhook is off: the platform-only gate answers this path as any other.',
        404: 'The webhook is off: ROBLOX_WEBHOOK_SECRET is not set.',
        409: "ERASURE_NOT_CONFIGURED: this instance's ERASURE_DIGEST_SECRET is not the installation's; nothing was recorded (logged at error).",
        413: 'A body over 64 KiB.',
        415: 'A compressed body (the signature is over the bytes as sent).',
        429: 'Too many bad signatures from this address this minute (AUTH_FAILURES_PER_MINUTE); retry after Retry-After seconds.',
      },
      description:
        'Called by the platform, not by game servers: no API key, no plan, outside the platform-only gate. The body is checked against ' +
        'roblox-signature (t=<unix seconds>,v1=<Base64 HMAC-SHA256 of "<t>.<body>" keyed by ROBLOX_WEBHOOK_SECRET). A RightToErasureRequest ' +
        'becomes an erasure job (docs/erasure.md); the same NotificationId again does nothing; a SampleNotification changes nothing.',
    }),
    auth: 'webhookSignature',
  },
];

const JOB = '/erasures/:jobId';

export const erasureAdminRoutes: readonly RouteSpec[] = [
  adminRoute('post', '/erasures', 'Erase a player in one workspace or in every workspace (a background job)', {
    body: eraseBody,
    ok: erasureJob,
    okStatus: 201,
    errors: [404, 409],
    errorText: {
      404: 'The workspace does not exist.',
      409: 'ERASURE_NOT_CONFIGURED: ERASURE_DIGEST_SECRET is not set on this instance, or is not the installation\'s.',
    },
    description: 'Answers the job at once (state pending); GET /erasures/{jobId} follows its progress. docs/erasure.md.',
  }),
  adminRoute('get', '/erasures', 'Erasure counts (requested, done, pending, failed, unmapped) and the newest jobs', {
    query: erasureListQuery,
    ok: erasureList,
    errors: [400, 409],
    errorText: { 409: 'ERASURE_NOT_CONFIGURED: ?user= needs ERASURE_DIGEST_SECRET on this instance.' },
  }),
  adminRoute('get', JOB, 'One erasure job and its progress', { params: { jobId: jobIdParam }, ok: erasureJob, errors: [404] }),
  adminRoute('post', `${JOB}/dismiss`, 'End a job waiting for games no workspace will serve (its user id is dropped)', {
    params: { jobId: jobIdParam },
    ok: erasureJob,
    errors: [404, 409],
    errorText: { 409: 'The job is not unmapped: only a job waiting for a game\'s mapping can be dismissed.' },
  }),
  adminRoute('get', '/workspaces/:id/games', "The platform's games the workspace serves", { ok: workspaceGames, errors: [404] }),
  adminRoute('put', '/workspaces/:id/games', "Set the platform's games the workspace serves (erasure requests name games)", {
    body: gamesBody,
    ok: workspaceGames,
    errors: [404, 409],
    errorText: { 409: 'A game is served by another workspace: remove it there first.' },
    description: 'Replaces the list. Erasure jobs that waited for one of the games (unmapped) run again.',
  }),
  adminRoute('get', '/workspaces/:id/erasure-players', 'The players an erasure of a user id also erases in the workspace (templates)', {
    ok: workspaceErasurePlayers,
    errors: [404],
  }),
  adminRoute('put', '/workspaces/:id/erasure-players', 'Set the players an erasure of a user id also erases in the workspace (Player_{userId})', {
    body: erasurePlayersBody,
    ok: workspaceErasurePlayers,
    errors: [400, 404],
    errorText: { 400: 'More than 10 templates, or a template over 100 characters, without {userId} exactly once, with other characters than A-Z a-z 0-9 _ . - around it, with digits alone around it, or two templates that can name one player for two users (P{userId} and P1{userId}).' },
    description:
      'Replaces the list. A game whose players are named after its store keys (the Luau facades: a ProfileStore profile "Player_42" is the player ' +
      'Player_42) lists them here, so that an erasure of the user reaches every copy. A repeated template is kept once; {userId} alone is dropped (that player is always erased).',
  }),
];
