// Argument checks made before any request: what the service would refuse anyway is a TypeError
// at once, and a number JSON cannot carry (NaN, Infinity, which JSON.stringify turns into null)
// never leaves the process.
import type { Operation } from './errors.js';
import type { BatchOp, JsonValue, UserId, Value } from './types.js';

function refuse(operation: Operation, what: string, got: unknown): never {
  throw new TypeError(`PlayerData.${operation}: ${what}, got ${String(got)}`);
}

export function userIdText(operation: Operation, userId: UserId): string {
  if (typeof userId === 'string' && userId !== '') return userId;
  if (typeof userId === 'number' && Number.isSafeInteger(userId) && userId >= 0) return String(userId);
  return refuse(operation, 'userId must be a non-negative whole number or a non-empty string', userId);
}

export function checkKey(operation: Operation, key: unknown, field = 'key'): string {
  if (typeof key !== 'string' || key === '') refuse(operation, `${field} must be a non-empty string`, key);
  return key;
}

export function checkValue(operation: Operation, value: unknown, field = 'value'): Value {
  if (value === undefined || value === null) {
    refuse(operation, `${field} must not be undefined or null (use delete to remove a key)`, value);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) refuse(operation, `${field} must be a finite number`, value);
  return value as Value;
}

export function checkNumber(operation: Operation, value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) refuse(operation, `${field} must be a finite number`, value);
  return value;
}

export function checkVersion(operation: Operation, value: unknown, field = 'ifVersion'): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    refuse(operation, `${field} must be a non-negative whole number`, value);
  }
  return value;
}

export function checkOptionalText(operation: Operation, value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  return checkKey(operation, value, field);
}

/** A message: any JSON value (null included), but not undefined, and no number JSON cannot carry at the top. */
export function checkMessage(operation: Operation, message: unknown): JsonValue {
  if (message === undefined) refuse(operation, 'message must be a JSON value, not undefined', message);
  if (typeof message === 'number' && !Number.isFinite(message)) refuse(operation, 'message must be a finite number', message);
  return message as JsonValue;
}

/** The ids of the messages a save acknowledges: an array of non-empty strings, or nothing. */
export function checkAcks(operation: Operation, ids: unknown, field = 'ackMessages'): string[] | undefined {
  if (ids === undefined) return undefined;
  if (!Array.isArray(ids)) refuse(operation, `${field} must be an array of message ids`, ids);
  return ids.map((id, i) => checkKey(operation, id, `${field}[${i}]`));
}

const PRINTABLE_ASCII = /^[\x20-\x7e]{1,128}$/;

/** 1-128 printable ASCII characters, as the service accepts for Idempotency-Key and a session owner. */
export function checkPrintable(operation: Operation, value: unknown, field: string): string {
  if (typeof value !== 'string' || !PRINTABLE_ASCII.test(value)) {
    refuse(operation, `${field} must be 1-128 printable ASCII characters`, value);
  }
  return value;
}

export function checkOps(operation: Operation, ops: unknown, at = 'ops'): BatchOp[] {
  if (!Array.isArray(ops)) refuse(operation, `${at} must be an array`, ops);
  return ops.map((op: unknown, i): BatchOp => {
    const where = `${at}[${i}]`;
    if (typeof op !== 'object' || op === null) refuse(operation, `${where} must be an object`, op);
    const o = op as Record<string, unknown>;
    const key = checkKey(operation, o['key'], `${where}.key`);
    switch (o['op']) {
      case 'set':
        return { op: 'set', key, value: checkValue(operation, o['value'], `${where}.value`) };
      case 'increment': {
        const amount = checkNumber(operation, o['amount'], `${where}.amount`);
        const defaultValue = checkNumber(operation, o['defaultValue'], `${where}.defaultValue`);
        return { op: 'increment', key, amount, defaultValue } as BatchOp;
      }
      case 'delete':
        return { op: 'delete', key };
      default:
        return refuse(operation, `${where}.op must be "set", "increment" or "delete"`, o['op']);
    }
  });
}
