// Compiles request schemas once at start-up and turns the first failure into a 400 that names
// the part (body, query) and the field. allErrors stays off: collecting every error is a DoS vector.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from '../errors.js';

const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, strict: true, allowUnionTypes: true });

/** Plain descriptions of the fields, clearer than ajv's messages for union types and patterns. */
const FIELD_RULES: Record<string, string> = {
  userId: 'must be a non-negative integer or a string of 1-64 characters from A-Z a-z 0-9 _ . -',
  key: 'must be a string of 1-128 characters without control characters',
  hasKey: 'must be a key name: 1-128 characters without control characters',
  prefix: 'must be 1-64 characters from A-Z a-z 0-9 _ . - (the start of user ids)',
  cursor: 'must be the "next" of the page before',
  value: 'must be a number, string, boolean, object or array (not null)',
  amount: 'must be a number',
  defaultValue: 'must be a number',
  ifVersion: 'must be a non-negative integer (the version the player was read at)',
  sessionId: 'must be a session id as acquire returned it',
  release: 'must be true or false',
  op: 'must be "set", "increment" or "delete"',
  ops: 'must be an array of at most 100 operations, each {op, key, ...}',
  players: 'must be an array of 1-100 players, each {userId, ops, ...}',
  owner: "must be the game server's id: 1-128 characters without control characters",
  ttlSeconds: 'must be a whole number of seconds from 30 to 3600',
  steal: 'must be true or false',
  load: 'must be true or false',
  version: 'must be a whole number from 0 (a version the history retains)',
  force: 'must be true or false',
  before: 'must be a whole number from 0 (the previous page\'s nextBefore)',
  score: 'must be a finite number',
  after: 'must be the "next" of a previous page',
  min: 'must be a number',
  max: 'must be a number',
  period: 'must be all, daily, weekly or monthly',
  previous: 'must be true or false',
  order: 'must be desc or asc',
  around: 'must be a whole number from 0 to 50',
  // Elements of an array, by the array's name.
  'GameIds[]': 'must be a game (universe) id: a whole number from 1 to 9007199254740991 (2^53 - 1), or its exact decimal digits in a string',
};

/** `/ops/2/value` as `ops[2].value`, and the last named segment (`value`) for its rule. */
function pathOf(instancePath: string): { path: string; field: string | undefined } {
  const segments = instancePath.split('/').slice(1);
  let path = '';
  let field: string | undefined;
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else {
      path += path === '' ? segment : `.${segment}`;
      field = segment;
    }
  }
  return { path, field };
}

/** The fields an object schema accepts, for messages about the whole body. */
function fieldsOf(schema: object): string[] {
  return Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
}

function describe(part: 'body' | 'query', error: ErrorObject, schema: object): string {
  const { path, field } = pathOf(error.instancePath);
  const within = (name: string) => (path === '' ? name : `${path}.${name}`);
  if (error.keyword === 'required') {
    return `Missing field "${within(String(error.params['missingProperty']))}" in ${part}`;
  }
  if (error.keyword === 'additionalProperties') {
    return `Unknown field "${within(String(error.params['additionalProperty']))}" in ${part}`;
  }
  if (path === '' && error.keyword === 'minProperties') {
    const fields = fieldsOf(schema).map((f) => `"${f}"`);
    const limit = Number(error.params['limit']);
    const what = part === 'body' ? 'Request body' : 'The query';
    return `${what} must set at least ${limit === 1 ? 'one' : limit} of the fields ${fields.join(', ')}`;
  }
  if (path === '') {
    return part === 'body' ? 'Request body must be a JSON object' : `Invalid ${part}`;
  }
  // An array's element (`ops[2]`) is judged by its array's element rule or ajv's words; a named field by its rule.
  const rule = FIELD_RULES[path.endsWith(']') ? `${field ?? ''}[]` : (field ?? '')] ?? error.message ?? 'is invalid';
  return `Invalid field "${path}" in ${part}: ${rule}`;
}

export type Validator<T> = (part: 'body' | 'query', input: unknown) => T;

export function compile<T>(schema: object): Validator<T> {
  const check: ValidateFunction = ajv.compile(schema);
  return (part, input) => {
    if (!check(input)) throw badRequest(describe(part, check.errors![0]!, schema));
    return input as T;
  };
}
