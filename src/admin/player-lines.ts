// One line of a workspace export (NDJSON): `{"userId","version","data":{"<key>":{"value",
// "updated_at"}}}`, the data in the one-player export's form (player-support.ts). Values are
// copied as the JSON text stored, never parsed and printed again, so that an export imported
// elsewhere answers the same bytes (an increment stores `1e-07` where JavaScript would print
// `1e-7`).
import { decodeEntry, encodeEntry, isoTime } from '../domain/entry.js';
import { normalizeUserId } from '../domain/ids.js';
import { checkValue } from '../domain/value.js';
import { AppError, ErrorCode } from '../errors.js';
import { isDataKey, KEY_MAX_LENGTH, MAX_IMPORTED_VERSION } from '../schemas/data.js';
import { members } from './json-members.js';

const META = 0; // meta fields of the player hash start with a NUL byte
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Fields of a line besides userId, version and data that are accepted and ignored: the one-player export's. */
const IGNORED = new Set(['workspaceId', 'exportedAt']);

export interface ExportedPlayer {
  /** The NDJSON line, without its newline. */
  readonly line: string;
  readonly keys: number;
  readonly version: number;
}

/**
 * Formats one player from its hash as HGETALL gives it (field, value, field, value, ...; meta
 * included), keeping Redis's order of the keys. A stored entry not in the stored form is a
 * corrupt player: the export stops rather than leave it out.
 */
export function exportLine(userId: string, fields: readonly string[]): ExportedPlayer {
  let version: number | undefined;
  const parts: string[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const field = fields[i]!;
    if (field.charCodeAt(0) === META) {
      if (field === '\0v') version = Number(fields[i + 1]);
      continue;
    }
    const entry = decodeEntry(fields[i + 1]!);
    if (!entry) throw new AppError(ErrorCode.INTERNAL, `Player ${userId}: stored entry "${field}" is not in the stored form`);
    parts.push(`${JSON.stringify(field)}:{"value":${entry.valueJson},"updated_at":"${isoTime(entry.updatedAtMs)}"}`);
  }
  // Written before versions existed: version 1 with data (read-player.lua says the same).
  const v = version ?? (parts.length > 0 ? 1 : 0);
  return { line: `{"userId":${JSON.stringify(userId)},"version":${v},"data":{${parts.join(',')}}}`, keys: parts.length, version: v };
}

export interface ImportedPlayer {
  readonly userId: string;
  readonly version: number;
  /** key, stored entry (`[updated_at_ms,<JSON>]`), key, entry, ... in the line's order. */
  readonly fields: string[];
  readonly keys: number;
}

export interface LineLimits {
  readonly maxValueDepth: number;
  readonly maxKeysPerPlayer: number;
  readonly maxPlayerBytes: number;
}

export class LineError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode = ErrorCode.INVALID_REQUEST,
    readonly userId?: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Parses and checks one line of an export. JSON.parse validates it and gives the values to
 * check; the keys' order and each value's exact text are taken from the line itself
 * (json-members.ts), since JSON.parse keeps neither.
 */
export function parsePlayerLine(line: string, limits: LineLimits): ImportedPlayer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (err) {
    throw new LineError(`not valid JSON (${(err as Error).message})`);
  }
  if (!isObject(parsed)) throw new LineError('a line must be a JSON object {"userId","version","data"}');
  for (const field of Object.keys(parsed)) {
    if (field !== 'userId' && field !== 'version' && field !== 'data' && !IGNORED.has(field)) {
      throw new LineError(`unknown field "${field}" (a line has userId, version and data)`);
    }
  }
  const userId = normalizeUserId(parsed['userId']);
  if (userId === undefined) throw new LineError('userId must be a non-negative integer or 1-64 characters from A-Z a-z 0-9 _ . -');
  const version = parsed['version'];
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
    throw new LineError('version must be a non-negative integer', ErrorCode.INVALID_REQUEST, userId);
  }
  // Larger, its version (or the next ones) would read back rounded: no ifVersion could match it.
  if (version > MAX_IMPORTED_VERSION) {
    throw new LineError(
      `version must be a whole number from 0 to ${MAX_IMPORTED_VERSION} (2^52; beyond, ifVersion could not match it for long)`,
      ErrorCode.INVALID_REQUEST,
      userId,
    );
  }
  const data = parsed['data'];
  if (!isObject(data)) throw new LineError('data must be an object of {"value","updated_at"} by key', ErrorCode.INVALID_REQUEST, userId);
  const names = Object.keys(data);
  if (names.length > 0 && version === 0) throw new LineError('version must be at least 1 for a player with data', ErrorCode.INVALID_REQUEST, userId);
  if (names.length > limits.maxKeysPerPlayer) {
    throw new LineError(`${names.length} keys, more than MAX_KEYS_PER_PLAYER (${limits.maxKeysPerPlayer})`, ErrorCode.TOO_MANY_KEYS, userId);
  }

  const top = members(line, 0);
  // JSON.parse takes the last of a repeated member: so does this.
  const dataMember = top.filter((m) => m.key === 'data').at(-1)!;
  const written = members(line, dataMember.start);
  if (written.length !== names.length) throw new LineError('data holds a key twice', ErrorCode.INVALID_REQUEST, userId);
  const fields: string[] = [];
  let bytes = 0;
  for (const member of written) {
    const key = member.key;
    // As the API's keySchema judges it: a key the API cannot address must not be stored.
    if (!isDataKey(key)) {
      throw new LineError(`data[${JSON.stringify(key.slice(0, 40))}]: a key is 1-${KEY_MAX_LENGTH} characters without control characters`, ErrorCode.INVALID_REQUEST, userId);
    }
    const entry = data[key];
    const where = `data[${JSON.stringify(key)}]`;
    if (!isObject(entry)) throw new LineError(`${where} must be {"value","updated_at"}`, ErrorCode.INVALID_REQUEST, userId);
    for (const field of Object.keys(entry)) {
      if (field !== 'value' && field !== 'updated_at') throw new LineError(`${where}: unknown field "${field}"`, ErrorCode.INVALID_REQUEST, userId);
    }
    const problem = checkValue(entry['value'], limits.maxValueDepth);
    if (problem) throw new LineError(`${where}.value: ${problem}`, ErrorCode.INVALID_REQUEST, userId);
    const at = entry['updated_at'];
    const ms = typeof at === 'string' && ISO_MS.test(at) ? Date.parse(at) : NaN;
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw new LineError(`${where}.updated_at must be a UTC time like 2026-11-23T10:00:00.000Z`, ErrorCode.INVALID_REQUEST, userId);
    }
    const inner = members(line, member.start).filter((m) => m.key === 'value');
    if (inner.length !== 1) throw new LineError(`${where} holds "value" twice`, ErrorCode.INVALID_REQUEST, userId);
    const valueJson = line.slice(inner[0]!.start, inner[0]!.end);
    const stored = encodeEntry(valueJson, ms);
    bytes += Buffer.byteLength(key) + Buffer.byteLength(stored);
    fields.push(key, stored);
  }
  if (bytes > limits.maxPlayerBytes) {
    throw new LineError(`${bytes} bytes, more than MAX_PLAYER_BYTES (${limits.maxPlayerBytes})`, ErrorCode.PLAYER_TOO_LARGE, userId);
  }
  return { userId, version, fields, keys: names.length };
}
