// The public API's routes as the OpenAPI document describes them. A route registered in
// src/http/routes/ without an entry here fails the coverage test.
import {
  acquireBody,
  batchBody,
  deleteBody,
  getDataQuery,
  incrementBody,
  multiBatchBody,
  releaseBody,
  renewBody,
  setBody,
} from '../../schemas/data.js';
import {
  batchResponse,
  deleteResponse,
  multiBatchResponse,
  releaseResponse,
  sessionResponse,
  entryResponse,
  getDataResponse,
  incrementResponse,
  openApiResponse,
  pingResponse,
} from '../../schemas/responses.js';
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
      'One player: `{userId, ops, ifVersion?, sessionId?, release?}`, at most 100 ops, each key once, all applied or none. Many players: `{players: [...]}`, at most 100, each atomic and independent, answered per player. One request against the plan either way.',
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
    body: acquireBody,
    ok: sessionResponse,
    ...idempotent,
    errors: [409, 422],
    errorText: { 409: 'SESSION_LOCKED: another live session holds the player (data: owner, expiresAt); IDEMPOTENCY_IN_PROGRESS.' },
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
];
