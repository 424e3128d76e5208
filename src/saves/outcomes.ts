// Turns the player scripts' decoded replies (store/players/script-protocol.ts) into what the
// routes answer: an applied write's version and per-op results, or an AppError with the code,
// message and extra fields of the refusal. A replayed reply goes through the same code as the
// first one, so a replay's answer is the first answer, byte for byte.
import { isoTime } from '../domain/entry.js';
import { AppError, ErrorCode, type ErrorExtras } from '../errors.js';
import type { DeliveredMessage, LiveSession, PlayerMetadata, Refusal, Replayable, SessionReply, WriteReply } from '../store/players/script-protocol.js';
import { REPLAYED_HEADER, keyReused } from './idempotency.js';

export interface Applied {
  readonly version: number;
  /** Per op: the set's updated_at ms, the increment's new value, the delete's '0' or '1'. */
  readonly results: readonly string[];
  readonly replayed: boolean;
  /** Messages handed to the session holding the player, oldest first (a save with its sessionId). */
  readonly messages: readonly DeliveredMessage[];
}

/** What the refusal messages may name. */
export interface RefusalContext {
  readonly maxKeysPerPlayer: number;
  readonly maxPlayerBytes: number;
  readonly ifVersion?: number | undefined;
  /** The keys of the ops, to name the op that failed in a batch; absent for a single write. */
  readonly opKeys?: readonly string[] | undefined;
}

function opLabel(context: RefusalContext, index: number): string {
  const key = context.opKeys?.[index];
  return key === undefined ? '' : `ops[${index}] ("${key}"): `;
}

/** The error a script's refusal answers. */
export function refusal(refused: Refusal, replayed: boolean, context: RefusalContext): AppError {
  if (refused.code === ErrorCode.IDEMPOTENCY_KEY_REUSED) return keyReused();
  if (refused.code === ErrorCode.INBOX_FULL) {
    return new AppError(
      ErrorCode.INBOX_FULL,
      `${refused.waiting} messages already wait for this player, the most that may (MESSAGES_MAX_WAITING): it must process some first`,
      replayed ? { headers: { [REPLAYED_HEADER]: 'true' } } : {},
    );
  }
  const { version } = refused;
  const headers = replayed ? { [REPLAYED_HEADER]: 'true' } : undefined;
  const make = (message: string, extras: ErrorExtras = { version }) =>
    new AppError(refused.code, message, { extras, ...(headers ? { headers } : {}) });
  switch (refused.code) {
    case ErrorCode.NOT_A_NUMBER:
      return make(`${opLabel(context, refused.opIndex)}Stored value is not a number`);
    case ErrorCode.NUMBER_OUT_OF_RANGE:
      return make(`${opLabel(context, refused.opIndex)}Increment would leave the finite number range`);
    case ErrorCode.TOO_MANY_KEYS:
      return make(`Player already has the maximum of ${context.maxKeysPerPlayer} keys; delete one first`);
    case ErrorCode.VERSION_CONFLICT:
      return make(
        context.ifVersion === undefined
          ? `Player is at version ${version}`
          : `Player is at version ${version}, not ${context.ifVersion}: read it again, then write`,
      );
    case ErrorCode.SESSION_LOCKED: {
      const expiresAt = isoTime(refused.expiresAtMs);
      return make(
        `Player is locked by the session of "${refused.owner}" until ${expiresAt}: write with its sessionId, or acquire with steal`,
        { version, data: { owner: refused.owner, expiresAt } },
      );
    }
    case ErrorCode.SESSION_LOST:
      return make('This session no longer holds the player (stolen, expired or released): acquire it again before writing');
    case ErrorCode.PLAYER_TOO_LARGE:
      return make(
        `The write would make the player ${refused.bytes} bytes, over the limit of ${context.maxPlayerBytes} bytes per player; delete or shrink values first`,
      );
    case ErrorCode.STORAGE_QUOTA_EXCEEDED:
      return make("The workspace is at or over its plan's storage quota: a player that has no data yet cannot be held; delete data, or move to a larger plan");
  }
}

/** An applied write's outcome, or its refusal thrown. */
export function appliedOrThrow({ reply, replayed }: Replayable<WriteReply>, context: RefusalContext): Applied {
  if (!reply.applied) throw refusal(reply.refusal, replayed, context);
  return { version: reply.version, results: reply.results, replayed, messages: reply.messages.delivered };
}

/** updated_at of a set, from its result. */
export function updatedAt(result: string): string {
  return isoTime(Number(result));
}

/** An acquire's or renew's session, or its refusal thrown. */
export function heldOrThrow(
  { reply, replayed }: Replayable<SessionReply>,
  context: RefusalContext,
): Held {
  if (!reply.applied) throw refusal(reply.refusal, replayed, context);
  if (reply.kind !== 'held') throw new AppError(ErrorCode.INTERNAL, 'A session call answered a release');
  return { version: reply.version, session: reply.session, metadata: reply.metadata, messages: reply.messages, replayed };
}

/** A session that holds a player now, and, after an acquire, what it was handed. */
export interface Held {
  readonly version: number;
  readonly session: LiveSession;
  readonly metadata?: PlayerMetadata | undefined;
  readonly messages?: readonly DeliveredMessage[] | undefined;
  readonly replayed: boolean;
}

/** A release's outcome, or its refusal thrown. */
export function releasedOrThrow(
  { reply, replayed }: Replayable<SessionReply>,
  context: RefusalContext,
): { readonly version: number; readonly released: boolean; readonly replayed: boolean } {
  if (!reply.applied) throw refusal(reply.refusal, replayed, context);
  if (reply.kind !== 'released') throw new AppError(ErrorCode.INTERNAL, 'A release answered a session');
  return { version: reply.version, released: reply.released, replayed };
}
