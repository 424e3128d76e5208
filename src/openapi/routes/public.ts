// The public API's routes as the OpenAPI document describes them. A route registered in
// src/http/routes/ without an entry here fails the coverage test.
import { deleteBody, getDataQuery, incrementBody, setBody } from '../../schemas/data.js';
import {
  deleteResponse,
  entryResponse,
  getDataResponse,
  incrementResponse,
  openApiResponse,
  pingResponse,
} from '../../schemas/responses.js';
import { openRoute, publicRoute, type RouteSpec } from '../route-spec.js';

export const publicRoutes: readonly RouteSpec[] = [
  openRoute('get', '/api/v1/openapi.json', 'This OpenAPI document (no API key needed)', 'meta', {
    ok: openApiResponse,
    // The platform-only access gate runs before every public path, this one included.
    errors: [401, 403, 503],
    errorText: {
      401: 'Gate on, editor play-test user agent: the key it must carry is missing or unknown.',
      403: 'The platform-only access gate refused the caller.',
      503: 'Gate on, editor play-test user agent: the key could not be checked, storage unavailable.',
    },
  }),
  publicRoute('get', '/ping', 'Verify the connection and the key', { ok: pingResponse }),
  publicRoute('get', '/data', 'Read one value, or every value of a player when key is omitted', {
    query: getDataQuery,
    ok: getDataResponse,
    errors: [400, 404],
    errorText: { 404: 'The player has no data, or the key does not exist.' },
  }),
  publicRoute('post', '/data/set', 'Set the value of a key', {
    body: setBody,
    ok: entryResponse,
    errors: [409],
    errorText: { 409: 'The player already has the maximum number of keys.' },
  }),
  publicRoute('post', '/data/increment', 'Add to a numeric value atomically', {
    body: incrementBody,
    ok: incrementResponse,
    errors: [409],
    errorText: { 409: 'The stored value is not a number, the result would not be finite, or the player has the maximum number of keys.' },
  }),
  publicRoute('post', '/data/delete', 'Delete one key, or all data of a player when key is omitted', {
    body: deleteBody,
    ok: deleteResponse,
  }),
];
