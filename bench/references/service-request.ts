// What the write references share with the service: its JSON body reader and its ajv
// validators, so that a reference takes a request exactly as the service does (the same body,
// read by src/http/middleware/json-body.ts within the default MAX_BODY_BYTES, validated by the
// schema the route compiles with src/http/validate.ts). What is left to compare is the service's
// own work around the one Redis command: the key, the limit, the script, the answer's version.
import Koa from 'koa';
import type { Middleware } from 'koa';
import { loadConfig } from '../../src/config.js';
import type { AppState } from '../../src/http/state.js';
import { jsonBody } from '../../src/http/middleware/json-body.js';

export { compile } from '../../src/http/validate.js';

/** The service's body reader, with the service's default body limit. */
export const readBody: Middleware<AppState> = jsonBody(loadConfig({}).limits.maxBodyBytes);

/** The Koa app of a reference: its state typed as the service's, which the body reader reads. */
export function referenceApp(): Koa<AppState> {
  return new Koa<AppState>();
}

/** The hash a write reference writes for a player (the bench's players are `u0`-`u9` and `hot`). */
export const referencePlayerKey = (userId: string | number) => `bench-ref:player:{${userId}}`;
