// Builds the OpenAPI 3.1 document from the route tables, whose request schemas are the very
// objects ajv compiles, so the document and the validation cannot disagree.
import { readFileSync } from 'node:fs';
import { errorEnvelope } from '../schemas/responses.js';
import type { JsonSchema, ResponseSpec, RouteSpec } from './route-spec.js';
import { adminRoutes } from './routes/admin.js';
import { opsRoutes } from './routes/ops.js';
import { erasureAdminRoutes, webhookRoutes } from './routes/erasure.js';
import { leaderboardRoutes } from './routes/leaderboards.js';
import { publicRoutes } from './routes/public.js';

const PUBLIC_ROUTES: readonly RouteSpec[] = [...publicRoutes, ...leaderboardRoutes, ...webhookRoutes];
const ADMIN_ROUTES: readonly RouteSpec[] = [...adminRoutes, ...erasureAdminRoutes];
export const ALL_ROUTES: readonly RouteSpec[] = [...PUBLIC_ROUTES, ...ADMIN_ROUTES, ...opsRoutes];

type Json = Record<string, unknown>;

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const PUBLIC_SERVER = {
  url: 'http://{host}:{port}',
  description: 'The public listener (HOST:PORT); behind a TLS proxy, its https:// address (docs/deployment.md).',
  variables: { host: { default: '127.0.0.1' }, port: { default: '8080' } },
};

const OPS_SERVER = {
  url: 'http://{opsHost}:{opsPort}',
  description: 'The ops listener (ADMIN_HOST:ADMIN_PORT), not the public port.',
  variables: { opsHost: { default: '127.0.0.1' }, opsPort: { default: '8081' } },
};

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** `/workspaces/:id` -> `/workspaces/{id}` */
export function toOpenApiPath(routerPath: string): string {
  return routerPath.replace(/:(\w+)/g, '{$1}');
}

function clone(schema: JsonSchema): Json {
  return schema === errorEnvelope ? { ...ERROR_REF } : (structuredClone(schema) as Json);
}

function operationId(route: RouteSpec): string {
  const words = route.path
    .split(/[/.]/)
    .filter((w) => w && w !== 'api' && w !== 'admin' && w !== 'v1')
    .map((w) => (w.startsWith(':') ? `By${w.slice(1)}` : w))
    .map((w) => w.replace(/^\w/, (c) => c.toUpperCase()));
  // The ops listener has its own /openapi.json: its operations are named apart from the public ones.
  const prefix = route.path.startsWith('/admin/') ? 'Admin' : onOpsListener(route.path) ? 'Ops' : '';
  return route.method + prefix + words.join('');
}

function parameters(route: RouteSpec): Json[] {
  const out: Json[] = [];
  for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
    out.push({ name, in: 'path', required: true, schema: clone(route.params?.[name!] ?? { type: 'string' }) });
  }
  const query = route.query as { properties?: Record<string, JsonSchema>; required?: readonly string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const { description, ...rest } = clone(schema);
    out.push({
      name,
      in: 'query',
      required: query?.required?.includes(name) ?? false,
      ...(description ? { description } : {}),
      schema: rest,
    });
  }
  for (const [name, header] of Object.entries(route.requestHeaders ?? {})) {
    out.push({ name, in: 'header', required: header.required, description: header.description, schema: clone(header.schema) });
  }
  return out;
}

/** Every answer of both listeners carries it (http/middleware/request-log.ts). */
const REQUEST_ID_HEADER = {
  'X-Request-Id': {
    description: "The request's id: the caller's X-Request-Id when it is 1-128 characters of A-Z a-z 0-9 _ . : / = + - holding nothing shaped like an API key, a new UUID otherwise.",
    required: true,
    schema: { type: 'string', pattern: '^[\\w.:/=+-]{1,128}$' },
  },
};

/**
 * Answers of no declared operation: a path no route has, and a method a path does not take.
 * Every path of both listeners can give them, so they are shared responses, not per operation.
 */
const routingResponses = (audience: Audience) => ({
  UnknownRoute: {
    description:
      'NOT_FOUND: no such endpoint ("No such endpoint: METHOD /path").' +
      (audience === 'public' ? '' : ' On the ops listener without ADMIN_TOKEN, /admin/ and /console/ answer ADMIN_API_OFF, whose message says what to set.'),
    content: { 'application/json': { schema: { ...ERROR_REF } } },
  },
  MethodNotAllowed: {
    description: 'METHOD_NOT_ALLOWED: the path exists but does not take this method; Allow lists the methods it takes.',
    headers: {
      Allow: { description: 'The methods the path takes, e.g. "HEAD, GET".', required: true, schema: { type: 'string' } },
    },
    content: { 'application/json': { schema: { ...ERROR_REF } } },
  },
});

function response(spec: ResponseSpec): Json {
  const headers = Object.entries({ ...REQUEST_ID_HEADER, ...spec.headers }).map(([name, h]) => [
    name,
    { description: h.description, required: h.required, schema: clone(h.schema) },
  ]);
  return {
    description: spec.description,
    headers: Object.fromEntries(headers),
    content: { [spec.contentType ?? 'application/json']: { schema: clone(spec.schema) } },
  };
}

function operation(route: RouteSpec): Json {
  const params = parameters(route);
  return {
    operationId: operationId(route),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: SECURITY_OF[route.auth],
    ...(params.length ? { parameters: params } : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { [route.bodyContentType ?? 'application/json']: { schema: clone(route.body) } } } }
      : {}),
    responses: Object.fromEntries(Object.entries(route.responses).map(([status, spec]) => [status, response(spec)])),
  };
}

const SECURITY_OF: Readonly<Record<RouteSpec['auth'], Json[]>> = {
  apiKey: [{ ApiKey: [] }],
  adminToken: [{ AdminToken: [] }, { ConsoleSession: [] }],
  webhookSignature: [{ RobloxSignature: [] }],
  none: [],
};

function onOpsListener(path: string): boolean {
  return !path.startsWith('/api/');
}

/**
 * Who a document is for: `public`, the public API alone (served on the public port);
 * `ops`, the ops listener's admin API, probes and metrics (served there); `all`, both, which
 * the tests check every answer against.
 */
export type Audience = 'public' | 'ops' | 'all';

const ROUTES_OF: Readonly<Record<Audience, readonly RouteSpec[]>> = {
  public: PUBLIC_ROUTES,
  ops: [...ADMIN_ROUTES, ...opsRoutes],
  all: ALL_ROUTES,
};

const DESCRIPTION_OF: Readonly<Record<Audience, string>> = {
  public: 'Per-player key-value data for game servers, organised in workspaces. The API lives under /api/v1 and needs an x-api-key.',
  ops:
    "The player data service's ops listener (ADMIN_PORT, 127.0.0.1 by default): the admin API under /admin/v1 " +
    '(only when ADMIN_TOKEN is set), the probes and /metrics.',
  all:
    'Per-player key-value data for game servers, organised in workspaces. The public API lives under /api/v1 ' +
    'and needs an x-api-key; the admin API (/admin/v1), the probes and /metrics live on the ops listener ' +
    '(ADMIN_PORT, 127.0.0.1 by default), the admin API only when ADMIN_TOKEN is set.',
};

const TAGS = [
  { name: 'meta', description: 'About the API itself.' },
  { name: 'ping', description: 'Connection and key check.' },
  { name: 'data', description: 'Player data.' },
  { name: 'webhooks', description: "The platform's webhook: right-to-erasure requests (on when ROBLOX_WEBHOOK_SECRET is set)." },
  { name: 'admin', description: 'Workspaces and API keys (ops listener, needs ADMIN_TOKEN).' },
  { name: 'ops', description: 'Probes and metrics (ops listener).' },
  { name: 'console', description: 'Sessions of the operator console (ops listener, needs ADMIN_TOKEN).' },
];

export function buildOpenApiDocument(audience: Audience = 'all'): Json {
  const routes = ROUTES_OF[audience];
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    const item = (paths[path] ??= onOpsListener(path) ? { servers: [OPS_SERVER] } : {});
    if (item[route.method]) throw new Error(`Route declared twice: ${route.method.toUpperCase()} ${route.path}`);
    item[route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Player data service',
      version: packageVersion(),
      description: DESCRIPTION_OF[audience],
    },
    servers: [audience === 'ops' ? OPS_SERVER : PUBLIC_SERVER],
    tags: TAGS.filter((tag) => routes.some((route) => route.tag === tag.name)),
    paths,
    components: {
      schemas: { Error: structuredClone(errorEnvelope) },
      responses: routingResponses(audience),
      securitySchemes: {
        ...(audience !== 'ops'
          ? {
              ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The workspace API key.' },
              RobloxSignature: {
                type: 'apiKey',
                in: 'header',
                name: 'roblox-signature',
                description: 't=<unix seconds>,v1=<Base64 HMAC-SHA256 of "<t>.<body as sent>" keyed by ROBLOX_WEBHOOK_SECRET>: the platform signs each webhook call.',
              },
            }
          : {}),
        ...(audience !== 'public'
          ? {
              AdminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN, for the admin API.' },
              ConsoleSession: {
                type: 'apiKey',
                in: 'cookie',
                name: 'pds_console',
                description:
                  'The operator console\'s session (POST /console/session), used when no Authorization header is sent; ' +
                  'state-changing requests also need its X-CSRF-Token, else 403 (docs/console.md).',
              },
            }
          : {}),
      },
    },
  };
}

const cached = new Map<Audience, string>();

/** A document as JSON text, built once. */
export function openApiJson(audience: Exclude<Audience, 'all'>): string {
  let text = cached.get(audience);
  if (text === undefined) {
    text = JSON.stringify(buildOpenApiDocument(audience));
    cached.set(audience, text);
  }
  return text;
}
