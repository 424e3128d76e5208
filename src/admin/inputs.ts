// Parses and checks what an operator types or posts, the same way for the CLI and the admin
// API, so both give the same 400 for the same mistake.
import { normalizeUserId } from '../domain/ids.js';
import { PLANS, type KeyScope, type Plan } from '../domain/types.js';
import { hasControlCharacter } from '../domain/value.js';
import { badRequest } from '../errors.js';
import { isDataKey, KEY_MAX_LENGTH } from '../schemas/data.js';

export const NAME_MAX = 100;
export const LABEL_MAX = 100;
/** Ten years: longer than any sensible expiry or grace, short of Date overflow. */
const DURATION_MAX_MS = 10 * 365 * 86_400_000;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parsePlan(raw: string): Plan {
  if (!(PLANS as readonly string[]).includes(raw)) {
    throw badRequest(`Plan must be one of ${PLANS.join(', ')}, got "${raw}"`);
  }
  return raw as Plan;
}

export function parseScope(raw: string): KeyScope {
  if (raw !== 'read' && raw !== 'write') throw badRequest(`Scope must be read or write, got "${raw}"`);
  return raw;
}

export function parseName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > NAME_MAX || hasControlCharacter(name)) {
    throw badRequest(`Workspace name must be 1-${NAME_MAX} characters without control characters`);
  }
  return name;
}

export function parseLabel(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const label = raw.trim();
  if (label.length === 0) return undefined;
  if (label.length > LABEL_MAX || hasControlCharacter(label)) {
    throw badRequest(`Key label must be at most ${LABEL_MAX} characters without control characters`);
  }
  return label;
}

/**
 * A duration such as `90d`, `12h`, `30m`, `45s`, `500ms` or `2w`; a bare number is seconds.
 * Returns milliseconds.
 */
export function parseDuration(raw: string | number, what: string): number {
  const text = String(raw).trim();
  const match = /^(\d+)(ms|s|m|h|d|w)?$/.exec(text);
  if (!match) throw badRequest(`${what} must be a duration such as 30s, 15m, 12h, 90d or 2w, got "${text}"`);
  const ms = Number(match[1]) * UNIT_MS[match[2] ?? 's']!;
  if (!Number.isSafeInteger(ms) || ms > DURATION_MAX_MS) throw badRequest(`${what} must be at most ten years`);
  return ms;
}

export interface ExpiryInput {
  /** ISO 8601 instant. */
  readonly expiresAt?: string | undefined;
  /** Duration from now, see parseDuration. */
  readonly expiresIn?: string | number | undefined;
}

/** The key's expiry as an ISO instant, or undefined for a key that never expires. */
export function resolveExpiry(input: ExpiryInput, nowMs: number): string | undefined {
  if (input.expiresAt !== undefined && input.expiresIn !== undefined) {
    throw badRequest('Give either an expiry time (expiresAt) or a duration (expiresIn), not both');
  }
  let at: number;
  if (input.expiresIn !== undefined) {
    at = nowMs + parseDuration(input.expiresIn, 'expiresIn');
    if (at <= nowMs) throw badRequest('expiresIn must be longer than 0');
  } else if (input.expiresAt !== undefined) {
    at = Date.parse(input.expiresAt);
    if (!/^\d{4}-\d{2}-\d{2}/.test(input.expiresAt) || Number.isNaN(at)) {
      throw badRequest(`expiresAt must be an ISO 8601 time such as 2030-01-31T00:00:00Z, got "${input.expiresAt}"`);
    }
    if (at <= nowMs) throw badRequest('expiresAt must be in the future');
  } else {
    return undefined;
  }
  return new Date(at).toISOString();
}

export function parseUserId(raw: string | number): string {
  const userId = normalizeUserId(raw);
  if (userId === undefined) {
    throw badRequest('User id must be a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -');
  }
  return userId;
}

export function parseDataKey(raw: string): string {
  if (!isDataKey(raw)) {
    throw badRequest(`Key must be 1-${KEY_MAX_LENGTH} characters without control characters`);
  }
  return raw;
}

/** Parses a value given as JSON text (the CLI's --value). */
export function parseJsonValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw badRequest(`Value must be JSON, for example 100, "text", true or {"level":3}; got ${JSON.stringify(text.slice(0, 40))}`);
  }
}

export function parsePositiveInt(raw: string | number, what: string, max: number): number {
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) throw badRequest(`${what} must be a whole number from 1 to ${max}`);
  return n;
}

/** A count that may be 0 (entries around a rank), up to `max`. */
export function parseWholeNumber(raw: string | number, what: string, max: number): number {
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0 || n > max) throw badRequest(`${what} must be a whole number from 0 to ${max}`);
  return n;
}

/** A version number as typed or posted: a whole number from 0. */
export function parseVersion(raw: string | number, what = 'version'): number {
  const n = typeof raw === 'number' ? raw : /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`${what} must be a whole number from 0`);
  return n;
}
