// Property-based fuzzing of the real HTTP server with fast-check: generated methods, paths,
// query strings, headers and bodies (valid, nearly valid and hostile). For every case: never a
// 5xx, always the standard envelope, and a request that was refused changed nothing, while a
// write that was accepted stored exactly what was sent.
import { Agent, request } from 'node:http';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { decodeEntry } from '../../src/domain/entry.js';
import { normalizeUserId } from '../../src/domain/ids.js';
import { keys } from '../../src/store/keys.js';

export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer | undefined;
}

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

export function send(baseUrl: string, req: FuzzRequest): Promise<FuzzAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    // A body is always framed, whatever the method: Node's client would send it unframed on GET.
    const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(req.body.length) };
    const r = request(
      { host: url.hostname, port: url.port, method: req.method, path: req.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

/** Strings a hostile or careless caller might send anywhere. */
const nasty = fc.constantFrom(
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf',
  'NaN', 'Infinity', '-Infinity', '1e309', '-0', '0x10', '9007199254740993', '1e-400', '',
  ' ', '\u0000', '\u202e', '\ud800', '{ws}', '}{', '*', '?', '[a]', 'a:b', '../..', '%00', '%zz', 'null', 'true',
  'SELECT 1', '${x}', '<script>', 'pds:p:{x}', '\\', '"', "'", 'x'.repeat(129), '1'.repeat(65),
);
const text = fc.oneof(nasty, fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.stringMatching(/^[A-Za-z0-9_.-]{1,70}$/));
const smallUsers = fc.constantFrom('1', '2', 'alice', 'u-1', '42');
const userIdField = fc.oneof(
  { weight: 6, arbitrary: smallUsers },
  fc.integer({ min: 0, max: 5 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -1, 1.5, 1e21),
  text,
  fc.constant(null),
  fc.boolean(),
  fc.array(smallUsers, { maxLength: 2 }),
);
const keyField = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('coins', 'level', 'inv', '__proto__', 'constructor', 'prototype') }, text, fc.integer(), fc.constant(null));
const numberField = fc.oneof(fc.integer(), fc.double({ noNaN: false }), fc.constantFrom('1', 'NaN', 'Infinity', '1e309'), fc.constant(null), fc.boolean());

/** JSON values, including keys that are special in JavaScript objects. */
const protoKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString');
const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ maxLength: 20 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(protoKey, fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** JSON text written by hand, so that `__proto__` appears as a plain member name. */
function toJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  return `{${Object.keys(value)
    .map((k) => `${JSON.stringify(k)}:${toJson((value as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}

const bodyObject = fc
  .record(
    {
      userId: userIdField,
      key: keyField,
      value: jsonValue,
      amount: numberField,
      defaultValue: numberField,
      extra: jsonValue,
    },
    { requiredKeys: [] },
  )
  .map((o) => Buffer.from(toJson(o)));

const deep = fc.integer({ min: 1, max: 3000 }).map((n) => Buffer.from(`{"userId":"1","key":"deep","value":${'['.repeat(n)}1${']'.repeat(n)}}`));
const wide = fc.integer({ min: 1, max: 5000 }).map((n) =>
  Buffer.from(`{"userId":"1","key":"wide","value":{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}}`),
);
const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) =>
  Buffer.concat([Buffer.from('{"userId":"1","key":"k","value":"'), Buffer.from([0xff, 0xfe, ...bytes]), Buffer.from('"}')]),
);
const hugeNumbers = fc.constantFrom('1e309', '-1e309', '1' + '0'.repeat(400), '123456789012345678901234567890', 'NaN', 'Infinity', '-0', '1e-400').map(
  (n) => Buffer.from(`{"userId":"1","key":"num","value":${n},"amount":${n}}`),
);
const garbage = fc.oneof(fc.string({ maxLength: 100 }), fc.constantFrom('{', '[', '{"a":', 'null', '""', '[]', '{}', '1', 'true', '{"userId":1,}')).map((s) => Buffer.from(s));

const body = fc.option(fc.oneof({ weight: 6, arbitrary: bodyObject }, deep, wide, invalidUtf8, hugeNumbers, garbage), { nil: undefined, freq: 5 });

const paths = fc.constantFrom('/api/v1/ping', '/api/v1/data', '/api/v1/data/set', '/api/v1/data/increment', '/api/v1/data/delete');
const path = fc.oneof(
  { weight: 8, arbitrary: paths },
  fc.constantFrom('/', '/api', '/api/v1', '/api/v1/', '/api/v2/ping', '/api/v1/data/', '//api/v1/ping', '/api/v1/../v1/ping', '/api/v1/data/set/x', '/API/V1/PING', '/api/v1/%2e%2e/ping', '/healthz', '/admin/v1/workspaces'),
  fc.string({ maxLength: 30 }).map((s) => '/api/v1/' + percent(s, true)),
);
/** Percent-encodes UTF-8 bytes (lone surrogates become U+FFFD); `raw` leaves `%`, `&`-free punctuation as is. */
function percent(text: string, raw: boolean): string {
  const keep = raw ? /[A-Za-z0-9\-._~!$'()*,;:@/%+=[\]]/ : /[A-Za-z0-9\-._~]/;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && keep.test(ch) ? ch : '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}
const queryValue = fc.oneof(smallUsers, text, fc.integer().map(String));
const query = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom('userId', 'key', '__proto__', 'constructor', 'userId[]', 'key[0]'), fc.string({ maxLength: 8 })), queryValue), { maxLength: 4 })
  .chain((pairs) =>
    fc.boolean().map((raw) =>
      pairs.length === 0
        ? ''
        : '?' + pairs.map(([k, v]) => `${percent(k, raw)}=${percent(v, raw)}`).join('&'),
    ),
  );

const contentType = fc.option(
  fc.oneof({ weight: 6, arbitrary: fc.constant('application/json') }, fc.constantFrom(
    'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain',
    'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/vnd.api+json', 'application/json;;', '*/*', 'garbage',
  )),
  { nil: undefined },
);
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });

export interface FuzzContext {
  readonly baseUrl: string;
  /** A valid key of the workspace under test. */
  readonly apiKey: string;
  readonly workspaceId: string;
  readonly redis: Redis;
}

export function fuzzRequest(apiKey: string): fc.Arbitrary<FuzzRequest> {
  const key = fc.oneof(
    { weight: 10, arbitrary: fc.constant(apiKey) },
    fc.constant(undefined),
    fc.constantFrom('pds_' + 'A'.repeat(40), apiKey + 'x', apiKey.toLowerCase(), ` ${apiKey}`, 'Bearer ' + apiKey),
    headerText,
  );
  return fc
    .record({
      // Mostly the method the path takes, so most cases reach the handlers.
      method: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 2, arbitrary: fc.constantFrom('GET', 'POST') },
        fc.constantFrom('PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'get'),
      ),
      path,
      query,
      key,
      contentType,
      extra: fc.dictionary(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerText, { maxKeys: 3 }),
      body,
    })
    .map((r) => {
      const headers: Record<string, string> = { ...r.extra };
      if (r.key !== undefined) headers['x-api-key'] = r.key;
      if (r.contentType !== undefined) headers['content-type'] = r.contentType;
      const method = r.method ?? (/\/data\/(set|increment|delete)/.test(r.path) ? 'POST' : 'GET');
      return { method, path: r.path + r.query, headers, body: r.body };
    });
}

/** What a write request aims at, when its body names a player and a key the service would accept. */
function target(req: FuzzRequest): { userId: string; key: string; parsed: Record<string, unknown> } | undefined {
  if (!req.body || req.method !== 'POST') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(req.body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const o = parsed as Record<string, unknown>;
  const userId = normalizeUserId(o['userId']);
  if (userId === undefined || typeof o['key'] !== 'string') return undefined;
  return { userId, key: o['key'], parsed: o };
}

/** Sends one case and checks every invariant; throws with the reason on a violation. */
export async function checkCase(ctx: FuzzContext, req: FuzzRequest): Promise<FuzzAnswer> {
  const aim = target(req);
  const hash = aim ? keys.player(ctx.workspaceId, aim.userId) : undefined;
  const before = aim ? await dataFields(ctx.redis, hash!) : undefined;
  const answer = await send(ctx.baseUrl, req);
  if (answer.status >= 500) throw new Error(`status ${answer.status}: ${answer.text}`);
  // OPTIONS is answered by the router with the Allow header and no body, as HTTP describes.
  const bareOptions = req.method === 'OPTIONS' && answer.status === 200 && answer.text === '' && typeof answer.headers['allow'] === 'string';
  if (req.method !== 'HEAD' && !bareOptions) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.text);
    } catch {
      throw new Error(`status ${answer.status} with a body that is not JSON: ${answer.text.slice(0, 200)}`);
    }
    const envelope = parsed as { success?: unknown; error?: unknown; code?: unknown; version?: unknown };
    if (answer.status >= 400) {
      const extras = Object.keys(envelope).filter((k) => !['success', 'error', 'code', 'version'].includes(k));
      if (envelope.success !== false || typeof envelope.error !== 'string' || envelope.error === '' || typeof envelope.code !== 'string' || extras.length > 0) {
        throw new Error(`status ${answer.status} without the error envelope: ${answer.text.slice(0, 200)}`);
      }
      if (answer.text.includes(ctx.apiKey)) throw new Error('an error message holds the raw API key');
    } else if (envelope.success !== true) {
      throw new Error(`status ${answer.status} without success: true: ${answer.text.slice(0, 200)}`);
    }
  }
  if (aim && hash) {
    const after = await dataFields(ctx.redis, hash);
    const path = req.path.split('?')[0];
    if (answer.status !== 200) {
      if (JSON.stringify(after) !== JSON.stringify(before)) throw new Error(`a refused request (${answer.status}) changed ${hash}`);
    } else if (path === '/api/v1/data/set') {
      // Only the one entry changed, and it holds exactly the value sent.
      const stored = own(after, aim.key);
      const entry = stored === undefined ? undefined : decodeEntry(stored);
      if (!entry) throw new Error(`an accepted set left no well-formed entry for ${aim.key}`);
      if (!isDeepStrictEqualJson(JSON.parse(entry.valueJson), aim.parsed['value'])) {
        throw new Error(`stored ${entry.valueJson.slice(0, 100)} is not what was sent`);
      }
      onlyChanged(before!, after, aim.key);
    } else if (path === '/api/v1/data/increment') {
      // The entry holds the value answered, which is the old one (or the default) plus the amount.
      const stored = own(after, aim.key);
      const entry = stored === undefined ? undefined : decodeEntry(stored);
      const answered = (JSON.parse(answer.text) as { value: number }).value;
      if (!entry || Number(entry.valueJson) !== answered) throw new Error(`increment answered ${answered} but stored ${entry?.valueJson}`);
      const previous = own(before!, aim.key);
      const old = previous === undefined ? undefined : decodeEntry(previous);
      const base = old ? Number(old.valueJson) : ((aim.parsed['defaultValue'] as number | undefined) ?? 0);
      const amount = (aim.parsed['amount'] as number | undefined) ?? 1;
      if (answered !== base + amount) throw new Error(`increment of ${base} by ${amount} answered ${answered}`);
      onlyChanged(before!, after, aim.key);
    } else if (path === '/api/v1/data/delete') {
      const gone = aim.parsed['key'] === undefined ? Object.keys(before!) : [aim.key];
      for (const field of gone) if (Object.hasOwn(after, field)) throw new Error(`a delete left ${field}`);
      if (aim.parsed['key'] !== undefined) onlyChanged(before!, after, aim.key);
    }
    for (const [field, stored] of Object.entries(after)) {
      const entry = decodeEntry(stored);
      if (!entry) throw new Error(`entry ${field} is not well-formed: ${stored.slice(0, 100)}`);
      JSON.parse(entry.valueJson);
    }
  }
  return answer;
}

/** A player's data fields, without its meta (version, counts, session: fields starting with NUL). */
async function dataFields(redis: { hgetall(key: string): Promise<Record<string, string>> }, hash: string): Promise<Record<string, string>> {
  const all = await redis.hgetall(hash);
  const data: Record<string, string> = {};
  for (const field of Object.keys(all)) {
    if (!field.startsWith('\0')) Object.defineProperty(data, field, { value: all[field], enumerable: true, writable: true, configurable: true });
  }
  return data;
}

/** A field of a player's hash; never an inherited property, whatever the field is called ("__proto__"). */
function own(fields: Record<string, string>, field: string): string | undefined {
  return Object.hasOwn(fields, field) ? fields[field] : undefined;
}

/** Throws when any field other than `key` differs between the two snapshots of a player. */
function onlyChanged(before: Record<string, string>, after: Record<string, string>, key: string): void {
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (field !== key && own(before, field) !== own(after, field)) throw new Error(`a write of ${key} changed ${field}`);
  }
}

function isDeepStrictEqualJson(a: unknown, b: unknown): boolean {
  return toJson(a) === toJson(b);
}

export interface FuzzRun {
  readonly cases: number;
  readonly ms: number;
  readonly statuses: Record<number, number>;
}

/** Runs `numRuns` generated cases, `parallel` properties at once (each with its own workspace). */
export async function runFuzz(contexts: readonly FuzzContext[], numRuns: number, seed?: number): Promise<FuzzRun> {
  const statuses: Record<number, number> = {};
  const started = Date.now();
  let cases = 0;
  await Promise.all(
    contexts.map((ctx, i) =>
      fc.assert(
        fc.asyncProperty(fuzzRequest(ctx.apiKey), async (req) => {
          const answer = await checkCase(ctx, req);
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          cases++;
        }),
        { numRuns: Math.ceil(numRuns / contexts.length), ...(seed === undefined ? {} : { seed: seed + i }), endOnFailure: true },
      ),
    ),
  );
  return { cases, ms: Date.now() - started, statuses };
}
