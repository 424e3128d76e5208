// Turns the player scripts' replies (lua/write-player.lua, lua/player-session.lua) into what the
// routes answer: an applied write's version and per-op results, or an AppError with the code,
// message and extra fields of the refusal. A replayed reply goes through the same code as the
// first one, so a replay's answer is the first answer, byte for byte.
import { isoTime } from '../domain/entry.js';
import { AppError, ErrorCode, type ErrorExtras } from '../errors.js';
import { ScriptCode, ERROR_OF_SCRIPT_CODE, unexpectedScriptReply } from '../store/redis/scripts.js';
import type { ScriptReply } from '../store/players/player-data.js';
import { REPLAYED_HEADER, keyReused } from './idempotency.js';

export interface Applied {
  readonly version: number;
  /** Per op: the set's updated_at ms, the increment's new value, the delete's '0' or '1'. */
  readonly results: readonly string[];
  readonly replayed: boolean;
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

/** The refusal of a script reply with a negative code. */
export function refusal(reply: ReadonlyArray<string | number>, replayed: boolean, context: RefusalContext): AppError {
  const code = Number(reply[0]);
  const version = Number(reply[1]);
  const headers = replayed ? { [REPLAYED_HEADER]: 'true' } : undefined;
  const make = (message: string, extras: ErrorExtras = { version }) =>
    new AppError(ERROR_OF_SCRIPT_CODE[code] ?? ErrorCode.INTERNAL, message, { extras, ...(headers ? { headers } : {}) });
  switch (code) {
    case ScriptCode.NOT_A_NUMBER:
      return make(`${opLabel(context, Number(reply[2]))}Stored value is not a number`);
    case ScriptCode.NUMBER_OUT_OF_RANGE:
      return make(`${opLabel(context, Number(reply[2]))}Increment would leave the finite number range`);
    case ScriptCode.TOO_MANY_KEYS:
      return make(`Player already has the maximum of ${context.maxKeysPerPlayer} keys; delete one first`);
    case ScriptCode.VERSION_CONFLICT:
      return make(
        context.ifVersion === undefined
          ? `Player is at version ${version}`
          : `Player is at version ${version}, not ${context.ifVersion}: read it again, then write`,
      );
    case ScriptCode.SESSION_LOCKED: {
      const expiresAt = isoTime(Number(reply[3]));
      const owner = String(reply[2]);
      return make(
        `Player is locked by the session of "${owner}" until ${expiresAt}: write with its sessionId, or acquire with steal`,
        { version, data: { owner, expiresAt } },
      );
    }
    case ScriptCode.SESSION_LOST:
      return make('This session no longer holds the player (stolen, expired or released): acquire it again before writing');
    case ScriptCode.PLAYER_TOO_LARGE:
      return make(
        `The write would make the player ${Number(reply[2])} bytes, over the limit of ${context.maxPlayerBytes} bytes per player; delete or shrink values first`,
      );
    case ScriptCode.IDEMPOTENCY_KEY_REUSED:
      return keyReused();
    default:
      return unexpectedScriptReply(reply);
  }
}

/** An applied write's outcome, or its refusal thrown. */
export function appliedOrThrow({ reply, replayed }: ScriptReply, context: RefusalContext): Applied {
  if (reply[0] !== 1) throw refusal(reply, replayed, context);
  return { version: Number(reply[1]), results: reply.slice(5).map(String), replayed };
}

/** updated_at of a set, from its result. */
export function updatedAt(result: string): string {
  return isoTime(Number(result));
}
