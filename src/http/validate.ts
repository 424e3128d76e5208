// Compiles request schemas once at start-up and turns the first failure into a 400 that names
// the part (body, query) and the field. allErrors stays off: collecting every error is a DoS vector.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from '../errors.js';

const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: false, strict: true, allowUnionTypes: true });

/** Plain descriptions of the fields, clearer than ajv's messages for union types and patterns. */
const FIELD_RULES: Record<string, string> = {
  userId: 'must be a non-negative integer or a string of 1-64 characters from A-Z a-z 0-9 _ . -',
  key: 'must be a string of 1-128 characters without control characters',
  value: 'must be a number, string, boolean, object or array (not null)',
  amount: 'must be a number',
  defaultValue: 'must be a number',
};

function describe(part: 'body' | 'query', error: ErrorObject): string {
  if (error.keyword === 'required') {
    return `Missing field "${String(error.params['missingProperty'])}" in ${part}`;
  }
  if (error.keyword === 'additionalProperties') {
    return `Unknown field "${String(error.params['additionalProperty'])}" in ${part}`;
  }
  const field = error.instancePath.split('/')[1];
  if (field === undefined) {
    return part === 'body' ? 'Request body must be a JSON object' : `Invalid ${part}`;
  }
  const rule = FIELD_RULES[field] ?? error.message ?? 'is invalid';
  return `Invalid field "${field}" in ${part}: ${rule}`;
}

export type Validator<T> = (part: 'body' | 'query', input: unknown) => T;

export function compile<T>(schema: object): Validator<T> {
  const check: ValidateFunction = ajv.compile(schema);
  return (part, input) => {
    if (!check(input)) throw badRequest(describe(part, check.errors![0]!));
    return input as T;
  };
}
