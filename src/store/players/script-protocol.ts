// The one place that knows the player scripts' arguments and replies (lua/write-player.lua,
// lua/player-session.lua, lua/send-message.lua, lua/import-player.lua, lua/read-player.lua) and
// the session field they store (parseSessionField): each reply is decoded here, once, into a
// typed outcome that callers read by name, a refusal into a typed Refusal. The three scripts
// that keep answers under an Idempotency-Key (write, session, message) answer a replay as
// `{ 2, '<first answer as JSON>' }`, decoded by the same code as a live answer, so a replay
// answers exactly what the first did. Nothing here calls Redis: player-scripts.ts runs the
// scripts that change a player, player-data.ts and player-transfer.ts the others.
import { encodeEntry } from '../../domain/entry.js';
import { AppError, ErrorCode } from '../../errors.js';
import { ScriptCode, unexpectedScriptReply, unwrapReplay } from '../redis/scripts.js';

export type RawReply = ReadonlyArray<string | number>;

/** What an applied write or import changed in the stored bytes and players of its workspace. */
export interface StorageDelta {
  /** Bytes of data (key names + stored entries). */
  readonly dataBytes: number;
  /** 1 when the player now holds data and did not, -1 for the opposite, else 0. */
  readonly players: number;
  /** Bytes of history. */
  readonly historyBytes: number;
  /**
   * A player held by a session before it had any data, as it starts or stops counting:
   * `[minute its hash has surely expired in, Redis bytes]` each (negative: stops). Absent: none.
   */
  readonly held?: HeldChanges;
}

/** `[minute, bytes]` pairs of players held without data (lua/includes/session.lua's heldChange). */
export type HeldChanges = ReadonlyArray<readonly [minute: number, bytes: number]>;

/** The held field of a script's reply: `<minute> <bytes> ...`, '' (or absent) for none. */
export function heldChangesOf(text: unknown): HeldChanges | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  const parts = text.split(' ').map(Number);
  const changes: Array<[number, number]> = [];
  for (let i = 0; i + 1 < parts.length; i += 2) changes.push([parts[i]!, parts[i + 1]!]);
  return changes;
}

export const NO_STORAGE_CHANGE: StorageDelta = Object.freeze({ dataBytes: 0, players: 0, historyBytes: 0 });

/** The bytes a delta adds to (or removes from) the workspace's stored total. */
export const storedBytesOf = (delta: StorageDelta): number => delta.dataBytes + delta.historyBytes;

/** Why a player script refused, with what the refusal's answer names. Nothing was written. */
export type Refusal =
  | { readonly code: typeof ErrorCode.NOT_A_NUMBER | typeof ErrorCode.NUMBER_OUT_OF_RANGE; readonly version: number; readonly opIndex: number }
  | { readonly code: typeof ErrorCode.TOO_MANY_KEYS; readonly version: number; readonly keys?: number }
  | { readonly code: typeof ErrorCode.VERSION_CONFLICT | typeof ErrorCode.SESSION_LOST; readonly version: number }
  | { readonly code: typeof ErrorCode.SESSION_LOCKED; readonly version: number; readonly owner: string; readonly expiresAtMs: number }
  | { readonly code: typeof ErrorCode.PLAYER_TOO_LARGE; readonly version: number; readonly bytes: number }
  | { readonly code: typeof ErrorCode.IDEMPOTENCY_KEY_REUSED }
  | { readonly code: typeof ErrorCode.STORAGE_QUOTA_EXCEEDED; readonly version: number }
  | { readonly code: typeof ErrorCode.INBOX_FULL; readonly waiting: number };

/** A message handed to a session (lua/includes/inbox.lua): its id, when it was sent, the message's JSON text. */
export interface DeliveredMessage {
  readonly id: string;
  readonly sentAtMs: number;
  readonly messageJson: string;
}

/** What a save did to its player's messages: those handed to the session, and those it acknowledged (what each held, until when). */
export interface MessageChanges {
  readonly delivered: readonly DeliveredMessage[];
  readonly acknowledged: ReadonlyArray<{ readonly bytes: number; readonly expiresAtMs: number }>;
}

const NO_MESSAGE_CHANGES: MessageChanges = Object.freeze({ delivered: [], acknowledged: [] });

/**
 * Messages as the scripts give them: `[[id, sentAtMs, <message>], ...]`. The message is JSON the
 * script copied as it was stored, so it is parsed here only to be written back out as text.
 */
function deliveredOf(list: unknown): DeliveredMessage[] {
  if (!Array.isArray(list)) return [];
  return list.map((m) => {
    const [id, sentAtMs, message] = m as [string, number, unknown];
    return { id, sentAtMs, messageJson: JSON.stringify(message) };
  });
}

function messageChangesOf(text: unknown): MessageChanges {
  if (typeof text !== 'string' || text === '') return NO_MESSAGE_CHANGES;
  const parsed = JSON.parse(text) as { d?: unknown; a?: Array<[number, number]> };
  return {
    delivered: deliveredOf(parsed.d),
    acknowledged: (parsed.a ?? []).map(([bytes, expiresAtMs]) => ({ bytes, expiresAtMs })),
  };
}

export type WriteReply =
  | {
      readonly applied: true;
      readonly version: number;
      readonly storage: StorageDelta;
      /** Bytes the script read or copied inside Redis (replaced entries, history written or thinned): its Redis time, for the byte budget. */
      readonly workBytes: number;
      /** Messages handed to the session and acknowledged by this save. */
      readonly messages: MessageChanges;
      /** Per op: a set's updated_at ms, an increment's new value, a delete's '0' or '1'; a delete of everything: the keys removed. */
      readonly results: readonly string[];
    }
  | { readonly applied: false; readonly refusal: Refusal };

export interface LiveSession {
  readonly sessionId: string;
  readonly owner: string;
  readonly expiresAtMs: number;
}

/**
 * The session lock as the player hash keeps it (field \0s): `<id>|<expires ms>|<lease ms>|<owner>`
 * (lua/includes/session.lua parses it on the Lua side); undefined when it is not in that form.
 */
export function parseSessionField(text: string): (LiveSession & { readonly leaseMs: number }) | undefined {
  const parsed = /^([^|]*)\|(\d+)\|(\d+)\|(.*)$/s.exec(text);
  if (!parsed) return undefined;
  return { sessionId: parsed[1]!, expiresAtMs: Number(parsed[2]), leaseMs: Number(parsed[3]), owner: parsed[4]! };
}

/** What an acquire tells of the player beside its session (ProfileStore's metadata): kept by the service, not in the player's keys. */
export interface PlayerMetadata {
  readonly firstSessionAtMs: number;
  /** Sessions acquired so far, this one counted. */
  readonly sessionCount: number;
}

export type SessionReply =
  /** acquire and renew: the session that now holds the player; an acquire's metadata and the messages handed to it. */
  | {
      readonly applied: true;
      readonly kind: 'held';
      readonly version: number;
      readonly session: LiveSession;
      readonly metadata?: PlayerMetadata;
      readonly messages?: readonly DeliveredMessage[];
      /** A player without data starting (or moving) to count as held in its workspace's totals. */
      readonly held?: HeldChanges;
    }
  /** release: whether this call released it (false: it was not held by that id). */
  | { readonly applied: true; readonly kind: 'released'; readonly version: number; readonly released: boolean; readonly held?: HeldChanges }
  | { readonly applied: false; readonly refusal: Refusal };

/** A script's decoded reply, and whether it replays an Idempotency-Key's first answer. */
export interface Replayable<T> {
  readonly reply: T;
  readonly replayed: boolean;
  /** The reply as the script answered it (for a replay, the first answer): what an answer kept elsewhere holds. */
  readonly raw: RawReply;
}

/** The refusal of a negative code, from the fields every player script answers it with. */
function refusalOf(raw: RawReply): Refusal {
  const version = Number(raw[1]);
  switch (Number(raw[0])) {
    case ScriptCode.NOT_A_NUMBER:
      return { code: ErrorCode.NOT_A_NUMBER, version, opIndex: Number(raw[2]) };
    case ScriptCode.NUMBER_OUT_OF_RANGE:
      return { code: ErrorCode.NUMBER_OUT_OF_RANGE, version, opIndex: Number(raw[2]) };
    case ScriptCode.TOO_MANY_KEYS:
      return { code: ErrorCode.TOO_MANY_KEYS, version, ...(raw[2] !== undefined && Number(raw[2]) >= 0 ? { keys: Number(raw[2]) } : {}) };
    case ScriptCode.VERSION_CONFLICT:
      return { code: ErrorCode.VERSION_CONFLICT, version };
    case ScriptCode.SESSION_LOCKED:
      return { code: ErrorCode.SESSION_LOCKED, version, owner: String(raw[2]), expiresAtMs: Number(raw[3]) };
    case ScriptCode.SESSION_LOST:
      return { code: ErrorCode.SESSION_LOST, version };
    case ScriptCode.PLAYER_TOO_LARGE:
      return { code: ErrorCode.PLAYER_TOO_LARGE, version, bytes: Number(raw[2]) };
    case ScriptCode.IDEMPOTENCY_KEY_REUSED:
      return { code: ErrorCode.IDEMPOTENCY_KEY_REUSED };
    case ScriptCode.STORAGE_QUOTA_EXCEEDED:
      return { code: ErrorCode.STORAGE_QUOTA_EXCEEDED, version };
    case ScriptCode.INBOX_FULL:
      return { code: ErrorCode.INBOX_FULL, waiting: Number(raw[1]) };
    default:
      throw unexpectedScriptReply(raw);
  }
}

/** `[dataBytesDelta, playersDelta, historyBytesDelta]` at `at` of an applied reply. */
function storageAt(raw: RawReply, at: number): StorageDelta {
  return { dataBytes: Number(raw[at]), players: Number(raw[at + 1]), historyBytes: Number(raw[at + 2]) };
}


// ---------------------------------------------------------------------------------------------
// lua/write-player.lua

export type Op =
  | { readonly op: 'set'; readonly key: string; readonly valueJson: string }
  | { readonly op: 'increment'; readonly key: string; readonly amount: number; readonly defaultValue: number }
  | { readonly op: 'delete'; readonly key: string };

export interface PlayerWrite {
  /** Ignored when `deleteAll` is set. */
  readonly ops: readonly Op[];
  readonly deleteAll?: boolean;
  readonly ifVersion?: number | undefined;
  readonly sessionId?: string | undefined;
  /** Release the session after the write (with `sessionId`). */
  readonly release?: boolean | undefined;
  /** Messages this save acknowledges (processed), removed in its own step. */
  readonly ackMessages?: readonly string[] | undefined;
  /** Hand the holding session the messages that arrived since it was last handed some. */
  readonly deliverMessages?: boolean | undefined;
}

export interface WriteContext {
  readonly nowMs: number;
  /** Kind of write and who made it, for the history. */
  readonly kind: string;
  readonly actor: string;
  /**
   * The request's idempotency key (its SHA-256) and fingerprint, when it has one, and how long
   * its answer is kept (the configured IDEMPOTENCY_TTL_SECONDS when not said).
   */
  readonly idempotency?: { readonly keyHash: string; readonly fingerprint: string; readonly ttlSeconds?: number } | undefined;
}

export interface PlayerLimits {
  readonly maxKeysPerPlayer: number;
  readonly maxPlayerBytes: number;
  readonly idempotencyTtlSeconds: number;
  /** Restore points (lua/includes/restore-points.lua); config's `history`. */
  readonly history: {
    readonly intervalMs: number;
    readonly maxVersions: number;
    readonly fineMs: number;
    /** Points older than this are one a day (younger ones past fineMs: one an hour). */
    readonly hourlyMs: number;
    readonly maxAgeMs: number;
    readonly maxBytes: number;
  };
}

/** The limits argument of lua/write-player.lua: the same for every write, so built once (once per answer-keeping time). */
export function writeLimitsArg(limits: PlayerLimits, idempotencyTtlSeconds = limits.idempotencyTtlSeconds): string {
  const { intervalMs, maxVersions, fineMs, maxAgeMs, maxBytes, hourlyMs } = limits.history;
  return `${limits.maxKeysPerPlayer} ${limits.maxPlayerBytes} ${idempotencyTtlSeconds} ${intervalMs} ${maxVersions} ${fineMs} ${maxAgeMs} ${maxBytes} ${hourlyMs}`;
}

/** What a session id may hold (the schemas hold every id sent to it); the script parses on it. */
const SESSION_ID = /^[A-Za-z0-9_-]*$/;
/** A message's id (lua/send-message.lua): `msg_` and the ms it was sent at and a 6-digit sequence number. */
export const MESSAGE_ID = /^msg_\d{19}$/;

/** ARGV of lua/write-player.lua for one write (its header describes each). */
export function writePlayerArgs(limitsArg: string, write: PlayerWrite, context: WriteContext): string[] {
  let guards = '';
  if (write.ifVersion !== undefined || write.sessionId !== undefined || write.release) {
    const sessionId = write.sessionId ?? '';
    if (!SESSION_ID.test(sessionId)) throw new AppError(ErrorCode.INVALID_REQUEST, 'Invalid session id');
    guards = `${write.ifVersion ?? ''}|${sessionId}|${write.release ? 'r' : ''}`;
  }
  const acks = write.ackMessages ?? [];
  for (const id of acks) if (!MESSAGE_ID.test(id)) throw new AppError(ErrorCode.INVALID_REQUEST, `Invalid message id "${id.slice(0, 40)}"`);
  const messages = acks.length > 0 || write.deliverMessages ? `${write.deliverMessages ? 'd' : '-'}${acks.map((id) => ` ${id}`).join('')}` : '';
  const args: string[] = [String(context.nowMs), limitsArg, guards, context.idempotency?.fingerprint ?? '', `${context.kind} ${context.actor}`, messages];
  if (write.deleteAll) {
    args.push('a', '', '');
  } else {
    for (const op of write.ops) {
      if (op.op === 'set') args.push('s', op.key, encodeEntry(op.valueJson, context.nowMs));
      else if (op.op === 'increment') args.push('i', op.key, `${op.amount} ${op.defaultValue}`);
      else args.push('d', op.key, '');
    }
  }
  return args;
}

/** Status of an applied write in the layout of the release before (kept answers may still hold it). */
const APPLIED_V1 = 1;
const APPLIED = 3;
/** APPLIED to a player held without data, with its held change before the results. */
const APPLIED_HELD = 4;

/**
 * lua/write-player.lua's reply: `{ 3, version, dataBytesDelta, playersDelta, historyBytesDelta,
 * inboxBytesDelta, workBytes, messages, r1, ... }` (4: the same with a held change before r1), or `{ 1, version, dataBytesDelta,
 * playersDelta, historyBytesDelta, r1, ... }` in an answer kept by the release before, or a refusal.
 */
export function decodeWriteReply(raw: RawReply): Replayable<WriteReply> {
  const { reply, replayed } = unwrapReplay(raw);
  const version = Number(reply[1]);
  if (reply[0] === APPLIED || reply[0] === APPLIED_HELD) {
    const held = reply[0] === APPLIED_HELD ? heldChangesOf(reply[8]) : undefined;
    return {
      reply: {
        applied: true,
        version,
        storage: held ? { ...storageAt(reply, 2), held } : storageAt(reply, 2),
        workBytes: Number(reply[6]),
        messages: messageChangesOf(reply[7]),
        results: reply.slice(reply[0] === APPLIED_HELD ? 9 : 8).map(String),
      },
      replayed,
      raw: reply,
    };
  }
  if (reply[0] === APPLIED_V1) {
    return {
      reply: { applied: true, version, storage: storageAt(reply, 2), workBytes: 0, messages: NO_MESSAGE_CHANGES, results: reply.slice(5).map(String) },
      replayed,
      raw: reply,
    };
  }
  return { reply: { applied: false, refusal: refusalOf(reply) }, replayed, raw: reply };
}

// ---------------------------------------------------------------------------------------------
// lua/player-session.lua

export interface SessionRequest {
  readonly action: 'acquire' | 'renew' | 'release';
  readonly sessionId: string;
  readonly owner?: string;
  readonly ttlMs?: number | undefined;
  readonly steal?: boolean;
  /** The workspace is at or over its storage quota: an acquire of a player that never had data is refused. */
  readonly overQuota?: boolean;
  /** Acquire only: hand the new session every message waiting (with the join's load). */
  readonly deliverMessages?: boolean;
}

/** ARGV of lua/player-session.lua (its header describes each). */
export function playerSessionArgs(request: SessionRequest, idempotency: WriteContext['idempotency'], idempotencyTtlSeconds: number): string[] {
  return [
    request.action,
    request.sessionId,
    request.owner ?? '',
    request.ttlMs === undefined ? '' : String(request.ttlMs),
    request.steal ? '1' : '',
    idempotency?.fingerprint ?? '',
    String(idempotency?.ttlSeconds ?? idempotencyTtlSeconds),
    request.overQuota ? '1' : '',
    request.deliverMessages ? '1' : '',
  ];
}

/**
 * lua/player-session.lua's reply: `{ 1, version, sessionId, owner, expiresAtMs, ... }` for
 * acquire and renew, `{ 1, version, released, held }` for release, or a refusal; its header
 * describes the fields, the held change last.
 */
export function decodeSessionReply(raw: RawReply, action: SessionRequest['action']): Replayable<SessionReply> {
  const { reply, replayed } = unwrapReplay(raw);
  if (reply[0] !== 1) return { reply: { applied: false, refusal: refusalOf(reply) }, replayed, raw: reply };
  const version = Number(reply[1]);
  if (action === 'release') {
    const held = heldChangesOf(reply[3]);
    return { reply: { applied: true, kind: 'released', version, released: Number(reply[2]) === 1, ...(held ? { held } : {}) }, replayed, raw: reply };
  }
  // An acquire's answer kept by an older release has no metadata; a renew's has none.
  const acquired = action === 'acquire' && reply.length > 5 ? { metadata: { firstSessionAtMs: Number(reply[5]), sessionCount: Number(reply[6]) }, messages: deliveredOf(reply[7] ? JSON.parse(String(reply[7])) : []) } : {};
  const held = heldChangesOf(reply[action === 'acquire' ? 8 : 5]);
  return {
    reply: {
      applied: true,
      kind: 'held',
      version,
      session: { sessionId: String(reply[2]), owner: String(reply[3]), expiresAtMs: Number(reply[4]) },
      ...acquired,
      ...(held ? { held } : {}),
    },
    replayed,
    raw: reply,
  };
}

// ---------------------------------------------------------------------------------------------
// lua/import-player.lua

export type ImportMode = 'skip' | 'overwrite';

export type ImportReply =
  | {
      readonly applied: true;
      /** imported: a new player; replaced: overwrote one; skipped: exists (mode skip); unchanged: already this data. */
      readonly status: 'imported' | 'replaced' | 'skipped' | 'unchanged';
      readonly version: number;
      readonly storage: StorageDelta;
    }
  | { readonly applied: false; readonly refusal: Refusal };

const IMPORT_STATUS = { 1: 'imported', 2: 'replaced', 0: 'skipped', 3: 'unchanged' } as const;

/** ARGV of lua/import-player.lua (its header describes each). */
export function importPlayerArgs(
  mode: ImportMode,
  version: number,
  limits: { readonly maxKeysPerPlayer: number; readonly maxPlayerBytes: number },
  fields: readonly string[],
): string[] {
  return [mode, String(version), String(limits.maxKeysPerPlayer), String(limits.maxPlayerBytes), ...fields];
}

/** lua/import-player.lua's reply: `{ status, version, dataBytesDelta, playersDelta, historyBytesDelta }` or a refusal. */
export function decodeImportReply(raw: RawReply): ImportReply {
  const status = IMPORT_STATUS[Number(raw[0]) as keyof typeof IMPORT_STATUS];
  if (status !== undefined) return { applied: true, status, version: Number(raw[1]), storage: storageAt(raw, 2) };
  return { applied: false, refusal: refusalOf(raw) };
}

// ---------------------------------------------------------------------------------------------
// lua/read-player.lua

export type ReadReply =
  | {
      readonly complete: true;
      readonly version: number;
      /** Data keys and their stored entries, alternating. */
      readonly fields: readonly string[];
    }
  | { readonly complete: false; readonly version: number; readonly keys: number; readonly bytes: number };

/** lua/read-player.lua's reply: `{ 1, version, keys, bytes, key1, entry1, ... }` or `{ 0, version, keys, bytes }`. */
export function decodeReadReply(raw: RawReply): ReadReply {
  const version = Number(raw[1]);
  if (raw[0] === 1) return { complete: true, version, fields: raw.slice(4).map(String) };
  return { complete: false, version, keys: Number(raw[2]), bytes: Number(raw[3]) };
}

// ---------------------------------------------------------------------------------------------
// lua/send-message.lua

export type SendMessageReply =
  | { readonly sent: true; readonly id: string; readonly sentAtMs: number; readonly expiresAtMs: number; readonly bytes: number }
  | { readonly sent: false; readonly refusal: Refusal };

/** ARGV of lua/send-message.lua (its header describes each). */
export function sendMessageArgs(
  messageJson: string,
  ttlMs: number,
  maxWaiting: number,
  idempotency: WriteContext['idempotency'],
  idempotencyTtlSeconds: number,
): string[] {
  return [messageJson, String(ttlMs), String(maxWaiting), idempotency?.fingerprint ?? '', String(idempotency?.ttlSeconds ?? idempotencyTtlSeconds)];
}

/** lua/send-message.lua's reply: `{ 1, id, sentAtMs, expiresAtMs, bytes }` or a refusal. */
export function decodeSendMessageReply(raw: RawReply): Replayable<SendMessageReply> {
  const { reply, replayed } = unwrapReplay(raw);
  if (reply[0] === 1) {
    return {
      reply: { sent: true, id: String(reply[1]), sentAtMs: Number(reply[2]), expiresAtMs: Number(reply[3]), bytes: Number(reply[4]) },
      replayed,
      raw: reply,
    };
  }
  return { reply: { sent: false, refusal: refusalOf(reply) }, replayed, raw: reply };
}
