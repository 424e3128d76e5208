// The public API's routes as the OpenAPI document describes them. A route registered in
// src/http/routes/ without an entry here fails the coverage test.
import {
  acquireBody,
  batchBody,
  deleteBody,
  getDataQuery,
  incrementBody,
  messagesQuery,
  multiAcquireBody,
  multiBatchBody,
  sendMessageBody,
  versionQuery,
  versionsQuery,
  releaseBody,
  renewBody,
  setBody,
} from '../../schemas/data.js';
import {
  batchResponse,
  deleteResponse,
  messagesResponse,
  multiBatchResponse,
  multiSessionResponse,
  sendMessageResponse,
  versionResponse,
  versionsResponse,
  releaseResponse,
  sessionResponse,
  entryResponse,
  getDataResponse,
  incrementResponse,
  openApiResponse,
  pingResponse,
} from '../../schemas/responses.js';
import { playersQuery, playersResponse } from '../../schemas/players.js';
import { openRoute, publicRoute, type HeaderSpec, type RouteSpec } from '../route-spec.js';

/** Every write takes an Idempotency-Key and says when its answer is a replay (docs/safe-saves.md). */
export const idempotent = {
  requestHeaders: {
    'Idempotency-Key': {
      description:
        'Optional: 1-128 printable ASCII characters. The first answer for the key is kept 24 h per workspace; a repeat with the same request replays it and writes nothing; another request with the key is 422.',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x20-\\x7e]+$' },
    },
  } satisfies Record<string, HeaderSpec>,
  okHeaders: {
    'Idempotent-Replayed': {
      description: 'true when this answer repeats the first answer for the Idempotency-Key.',
      required: false,
      schema: { type: 'string', const: 'true' },
    },
  } satisfies Record<string, HeaderSpec>,
};

const WRITE_CONFLICTS =
  'VERSION_CONFLICT (ifVersion did not match; carries version), SESSION_LOCKED (a live session holds the player; data names it), SESSION_LOST (the sessionId no longer holds it), IDEMPOTENCY_IN_PROGRESS';

export const publicRoutes: readonly RouteSpec[] = [
  openRoute('get', '/api/v1/openapi.json', 'This OpenAPI document (no API key needed)', 'meta', {
    ok: openApiResponse,
    // The platform-only access gate runs before every public path, this one included.
    errors: [403, 429, 503],
    errorText: {
      403: 'The platform-only access gate refused the caller (an editor play-test without a development key included).',
      429: 'Gate on, editor play-test user agent: too many requests with an invalid key from this address (AUTH_FAILURES_PER_MINUTE).',
      503: 'Gate on, editor play-test user agent: the key could not be checked, storage unavailable.',
    },
  }),
  publicRoute('get', '/ping', 'Verify the connection and the key', { ok: pingResponse }),
  publicRoute('get', '/data', 'Read one value, or every value of a player when key is omitted', {
    query: getDataQuery,
    ok: getDataResponse,
    errors: [400, 404, 413],
    errorText: {
      404: 'PLAYER_NOT_FOUND (no data) or KEY_NOT_FOUND; carries the player\'s version.',
      413: 'PLAYER_TOO_LARGE: a player larger than MAX_PLAYER_BYTES (written before the limit) is read a key at a time.',
    },
  }),
  publicRoute('post', '/data/set', 'Set the value of a key', {
    body: setBody,
    ok: entryResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: `TOO_MANY_KEYS, ${WRITE_CONFLICTS}.`, 413: 'PAYLOAD_TOO_LARGE (body) or PLAYER_TOO_LARGE (the player would pass MAX_PLAYER_BYTES).' },
  }),
  publicRoute('post', '/data/increment', 'Add to a numeric value atomically', {
    body: incrementBody,
    ok: incrementResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: `NOT_A_NUMBER, NUMBER_OUT_OF_RANGE, TOO_MANY_KEYS, ${WRITE_CONFLICTS}.` },
  }),
  publicRoute('post', '/data/delete', 'Delete one key, or all data of a player when key is omitted', {
    body: deleteBody,
    ok: deleteResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: `${WRITE_CONFLICTS}.` },
  }),
  publicRoute('post', '/data/batch', 'Apply many ops to one player all or nothing, or to many players at once', {
    description:
      'One player: `{userId, ops, ifVersion?, sessionId?, release?}`, at most 100 ops, each key once, all applied or none. Many players: `{players: [...]}`, at most 100, each atomic and independent, written one after another on each Redis node (the nodes side by side) and answered per player: once the byte budget of the workspace is spent part way (or its writes queued past their turn), that player and the rest on its node answer `status` 429 `RATE_LIMITED` each, unwritten; a player whose Redis node fails answers 503 `STORAGE_UNAVAILABLE` (unwritten) or `OUTCOME_UNKNOWN` (sent, no answer) alone, the others written; the answer is 200 and carries their longest `Retry-After` (send those players again with a new key, or the whole request with the same Idempotency-Key, which writes only them). One request against the plan either way.',
    body: { anyOf: [batchBody, multiBatchBody] },
    ok: { anyOf: [batchResponse, multiBatchResponse] },
    ...idempotent,
    errors: [409, 422],
    errorText: {
      409: `NOT_A_NUMBER, NUMBER_OUT_OF_RANGE, TOO_MANY_KEYS (naming the op), ${WRITE_CONFLICTS}. Nothing of the batch is written.`,
      413: 'PAYLOAD_TOO_LARGE (body) or PLAYER_TOO_LARGE (the player would pass MAX_PLAYER_BYTES).',
    },
  }),
  publicRoute('post', '/sessions/acquire', "Take the lock on a player for a game server (optionally loading the player's data)", {
    description:
      'One player: `{userId, owner, ...}`, answered as its session (with load: its data and the messages waiting). Many players: `{players: [userId, ...], owner, ...}`, at most 100, each acquired on its own and answered per player (a player refused alone answers its own `status`: 409 locked, 429 `RATE_LIMITED` past the byte budget, 429 `RATE_LIMITED` when the workspace\'s writes queued past their turn, 503 `STORAGE_UNAVAILABLE` or `OUTCOME_UNKNOWN` when its Redis node fails, the players on other nodes acquired all the same; the answer is 200 and carries their longest `Retry-After`: ask again for those after it); with load, one such request of a workspace at a time on an instance, refused 429 whole while the workspace owes its byte budget. One request against the plan either way.',
    body: { anyOf: [acquireBody, multiAcquireBody] },
    ok: { anyOf: [sessionResponse, multiSessionResponse] },
    ...idempotent,
    errors: [409, 422],
    errorText: {
      403: "The key's scope does not allow writes, STORAGE_QUOTA_EXCEEDED (a player with no data acquired while the workspace is at its quota), or the platform-only access gate refused the caller.",
      409: 'SESSION_LOCKED: another live session holds the player (data: owner, expiresAt); IDEMPOTENCY_IN_PROGRESS.',
    },
  }),
  publicRoute('post', '/sessions/renew', "Extend a session's lease", {
    body: renewBody,
    ok: sessionResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: 'SESSION_LOST: the session no longer holds the player; IDEMPOTENCY_IN_PROGRESS.' },
  }),
  publicRoute('post', '/sessions/release', 'End a session (idempotent)', {
    body: releaseBody,
    ok: releaseResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: 'IDEMPOTENCY_IN_PROGRESS.' },
  }),
  publicRoute('get', '/data/versions', "The player's versions that can be read, newest first (restore points)", {
    description: 'Needs a write key. The current version, then one restore point per interval the player was written in (docs/history.md). Read one with GET /data/version; bring it back by saving what it held.',
    query: versionsQuery,
    ok: versionsResponse,
    errors: [400, 404],
    errorText: { 404: 'PLAYER_NOT_FOUND: the player was never written.' },
  }),
  publicRoute('get', '/data/version', 'The whole player as it was at a version the history lists', {
    description: 'Needs a write key.',
    query: versionQuery,
    ok: versionResponse,
    errors: [400, 404],
    errorText: { 404: 'PLAYER_NOT_FOUND: the player was never written; VERSION_NOT_RETAINED: the history does not keep that version (or it does not exist yet).' },
  }),
  publicRoute('post', '/messages', 'Leave a message for a player, processed by the server that holds it', {
    description:
      'A gift or a note for a player who may be on another server or offline. It waits in the player\'s slot until a save acknowledges it (ackMessages) or it expires, and is handed to the session that holds the player: with the acquire\'s load, and with the answer of each save (docs/safe-saves.md, "Messages to players").',
    body: sendMessageBody,
    ok: sendMessageResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: {
      403: "The key's scope does not allow writes, STORAGE_QUOTA_EXCEEDED (the workspace is at its plan's storage quota), or the platform-only access gate refused the caller.",
      409: 'INBOX_FULL: MESSAGES_MAX_WAITING messages already wait for the player; IDEMPOTENCY_IN_PROGRESS.',
      413: 'PAYLOAD_TOO_LARGE: the body, or the message larger than MESSAGE_MAX_BYTES as JSON.',
    },
  }),
  publicRoute('get', '/messages', 'The messages waiting for a player, oldest first (reading does not consume)', {
    description: 'Up to 100 messages of 16 KiB: one read of a workspace at a time on an instance, paid to its byte budget by the answer\'s size, refused 429 while the workspace owes it.',
    query: messagesQuery,
    ok: messagesResponse,
    errors: [400],
  }),
  publicRoute('get', '/players', "The workspace's players, in pages: by user id prefix, and only those holding a data key", {
    description:
      'Any key may list (a read). Players with data only (erased players and players whose data was deleted entirely are never listed), in no useful order; a player on the list from the first page to the last is listed. A page holds at most `limit` players and does bounded work, so it may hold fewer, even none, before `next` is null. A player shows within PLAYER_INDEX_FLUSH_MS of its first write (docs/api.md).',
    query: playersQuery,
    ok: playersResponse,
    errors: [400],
  }),
];
