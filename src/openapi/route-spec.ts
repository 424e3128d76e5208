// How a route is declared for the OpenAPI document: method, path, summary, the request schemas
// ajv validates with, and a response schema for every status it can answer. The helpers add
// what every route of an API shares (auth failures, rate limiting, storage outages, body
// errors), so declaring a route is one short call.
import { errorEnvelope } from '../schemas/responses.js';

export type JsonSchema = Readonly<Record<string, unknown>>;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
/** webhookSignature: the platform's signed webhook (roblox-signature), no key. */
export type Auth = 'apiKey' | 'adminToken' | 'webhookSignature' | 'none';

export interface HeaderSpec {
  readonly description: string;
  readonly required: boolean;
  readonly schema: JsonSchema;
}

export interface ResponseSpec {
  readonly description: string;
  readonly schema: JsonSchema;
  /** Defaults to application/json. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, HeaderSpec>>;
}

export interface RouteSpec {
  readonly method: HttpMethod;
  /** Full path in the router's syntax, prefix included: `/admin/v1/workspaces/:id`. */
  readonly path: string;
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly auth: Auth;
  /** An object schema; each property becomes a query parameter. */
  readonly query?: JsonSchema;
  readonly body?: JsonSchema;
  /** The body's media type: application/json unless said. */
  readonly bodyContentType?: string;
  /** Schemas of the `:name` path segments; a plain string when not given. */
  readonly params?: Readonly<Record<string, JsonSchema>>;
  /** Request headers the route reads beyond the credentials (Idempotency-Key). */
  readonly requestHeaders?: Readonly<Record<string, HeaderSpec>>;
  readonly responses: Readonly<Record<number, ResponseSpec>>;
}

const ERROR_TEXT: Readonly<Record<number, string>> = {
  400: 'Missing or invalid fields; the message names the part and the field.',
  401: 'Missing, unknown, revoked or expired credentials.',
  403: 'The key\'s scope does not allow this request, or the platform-only access gate refused the caller (banned address, failed check, or an editor play-test with a production key).',
  404: 'The resource does not exist.',
  409: 'Conflict with the stored state; `code` says which (docs/safe-saves.md).',
  422: 'IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was first used for a different request.',
  413: 'Request body larger than MAX_BODY_BYTES.',
  415: 'Request body is not JSON.',
  429: "The plan's rate limit exceeded (with the X-RateLimit headers), or too many requests with a missing or invalid API key from this address (AUTH_FAILURES_PER_MINUTE, before any key is looked up: no X-RateLimit headers), or the workspace's byte budget for large answers and bodies on this instance spent (WORKSPACE_BYTES_PER_SECOND; the message says so), or (writes) the workspace sent more at once than its write turn on storage gets through within REDIS_COMMAND_TIMEOUT_MS (nothing written; the message says so); retry after Retry-After seconds.",
  500: 'Internal error; the caller may retry.',
  503: 'STORAGE_UNAVAILABLE: storage unavailable, nothing written; the caller may retry. OUTCOME_UNKNOWN (writes): the write was sent but its answer never came, so it may have been applied; retry with the same Idempotency-Key.',
};

const integerHeader = (description: string, required: boolean): HeaderSpec => ({
  description,
  required,
  schema: { type: 'string', pattern: '^\\d+$' },
});

/** Set on every answer once the request has been counted against the plan. */
export const rateLimitHeaders = (required: boolean): Record<string, HeaderSpec> => ({
  'X-RateLimit-Limit': integerHeader('Requests allowed per window on this plan.', required),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current window.', required),
  'X-RateLimit-Reset': integerHeader('Seconds until the window resets.', required),
});

/** Every 503 asks the caller to wait before retrying (errors.ts, STORAGE_RETRY_AFTER_SECONDS). */
const RETRY_AFTER_503 = { 'Retry-After': integerHeader('Seconds to wait before retrying.', true) };

export function errorResponse(status: number, headers?: Record<string, HeaderSpec>, text?: string): ResponseSpec {
  const description = text ?? ERROR_TEXT[status];
  if (!description) throw new Error(`No description for error status ${status}: add it to ERROR_TEXT`);
  const all = status === 503 ? { ...headers, ...RETRY_AFTER_503 } : headers;
  return { description, schema: errorEnvelope, ...(all ? { headers: all } : {}) };
}

export interface RouteOptions {
  readonly ok: JsonSchema;
  readonly okDescription?: string;
  /** Status of the success answer: 200 unless the route creates something (201). */
  readonly okStatus?: 200 | 201;
  /** Statuses particular to this route; the shared ones are added by the helper. */
  readonly errors?: readonly number[];
  /** Replaces the shared description of an error status for this route. */
  readonly errorText?: Readonly<Record<number, string>>;
  readonly query?: JsonSchema;
  readonly body?: JsonSchema;
  readonly params?: Readonly<Record<string, JsonSchema>>;
  readonly requestHeaders?: Readonly<Record<string, HeaderSpec>>;
  /** Headers of the success answer beyond the rate-limit ones. */
  readonly okHeaders?: Readonly<Record<string, HeaderSpec>>;
  readonly description?: string;
  /** The success answer's media type; for an admin route other than JSON, `ok` is its whole body (no envelope). */
  readonly contentType?: string;
  readonly bodyContentType?: string;
}

function errorsFor(
  statuses: Iterable<number>,
  options: RouteOptions,
  headers?: (status: number) => Record<string, HeaderSpec> | undefined,
) {
  const out: Record<number, ResponseSpec> = {};
  for (const status of [...new Set(statuses)].sort()) {
    out[status] = errorResponse(status, headers?.(status), options.errorText?.[status]);
  }
  return out;
}

function optional(options: RouteOptions) {
  return {
    ...(options.description ? { description: options.description } : {}),
    ...(options.query ? { query: options.query } : {}),
    ...(options.body ? { body: options.body } : {}),
    ...(options.bodyContentType ? { bodyContentType: options.bodyContentType } : {}),
    ...(options.params ? { params: options.params } : {}),
    ...(options.requestHeaders ? { requestHeaders: options.requestHeaders } : {}),
  };
}

const BODY_ERRORS = [400, 413, 415];

/** A route of the public API under /api/v1, behind x-api-key and the plan's rate limit. */
export function publicRoute(method: HttpMethod, path: string, summary: string, options: RouteOptions): RouteSpec {
  const shared = [401, 403, 429, 500, 503, ...(options.body ? BODY_ERRORS : []), ...(options.errors ?? [])];
  return {
    method,
    path: `/api/v1${path}`,
    summary,
    tag: path.split('/')[1] ?? 'api',
    auth: 'apiKey',
    ...optional(options),
    responses: {
      200: {
        description: options.okDescription ?? 'Success.',
        schema: options.ok,
        headers: { ...rateLimitHeaders(true), ...options.okHeaders },
      },
      ...errorsFor(shared, options, (status) =>
        status === 429
          ? { ...rateLimitHeaders(false), 'Retry-After': integerHeader('Seconds until the window resets.', true) }
          : status === 401
            ? undefined
            : rateLimitHeaders(false),
      ),
    },
  };
}

/** Wraps an admin answer in the success envelope. */
export function dataEnvelope(data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['success', 'data'],
    additionalProperties: false,
    properties: { success: { const: true }, data },
  };
}

const CONSOLE_WRITE_REFUSED =
  'A write made with a console session (cookie) but without its X-CSRF-Token, or from another site (docs/console.md).';

const ADMIN_TOKEN_LIMITED =
  'Too many wrong admin tokens from this address (ADMIN_AUTH_FAILURES in ADMIN_AUTH_WINDOW_SECONDS), answered even to the right token until the window ends; retry after Retry-After seconds.';

/** A route of the admin API under /admin/v1 on the ops listener, behind the admin token. */
export function adminRoute(method: HttpMethod, path: string, summary: string, options: RouteOptions): RouteSpec {
  // 403: a console session's write without its CSRF token, or from another site.
  const shared = [401, 429, 500, 503, ...(method === 'get' ? [] : [403]), ...(options.body ? BODY_ERRORS : []), ...(options.errors ?? [])];
  return {
    method,
    path: `/admin/v1${path}`,
    summary,
    tag: 'admin',
    auth: 'adminToken',
    ...optional(options),
    responses: {
      [options.okStatus ?? 200]: options.contentType
        ? { description: options.okDescription ?? 'Success.', schema: options.ok, contentType: options.contentType }
        : { description: options.okDescription ?? 'Success.', schema: dataEnvelope(options.ok) },
      ...errorsFor(shared, { ...options, errorText: { 403: CONSOLE_WRITE_REFUSED, 429: ADMIN_TOKEN_LIMITED, ...options.errorText } }, (status) =>
        status === 429 ? { 'Retry-After': integerHeader('Seconds until the address may try again.', true) } : undefined,
      ),
    },
  };
}

/** A route that needs no credentials: the probes, the metrics and this document. */
export function openRoute(method: HttpMethod, path: string, summary: string, tag: string, options: RouteOptions): RouteSpec {
  return {
    method,
    path,
    summary,
    tag,
    auth: 'none',
    ...optional(options),
    responses: {
      200: {
        description: options.okDescription ?? 'Success.',
        schema: options.ok,
        ...(options.contentType ? { contentType: options.contentType } : {}),
      },
      ...errorsFor(options.errors ?? [], options),
    },
  };
}
