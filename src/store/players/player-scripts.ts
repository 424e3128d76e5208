// Runs the scripts that change a player (lua/write-player.lua, lua/player-session.lua,
// lua/send-message.lua) one way: the script is sent through `changing`, so a script sent and not
// answered (a timeout, a connection dropped after sending) is OUTCOME_UNKNOWN, never the
// "nothing happened" of STORAGE_UNAVAILABLE; its reply is decoded by script-protocol.ts; and
// the bytes of the answer it kept under the request's Idempotency-Key are counted for the
// storage totals.
import { keys } from '../keys.js';
import { changing, type RedisClient } from '../redis/redis.js';
import { keptRecordBytes } from '../workspaces/idempotency-claims.js';
import type { RawReply, Replayable, WriteContext } from './script-protocol.js';

/** A script's reply, and the bytes of the answer it kept for the request's Idempotency-Key (0 for none, or a replay). */
export type KeptReply<T> = Replayable<T> & { readonly keptBytes: number };

/**
 * Runs one player script: `script` is called with the player's idempotency record key (a key of
 * the player's slot even without an Idempotency-Key: the scripts then never read or write it),
 * its reply decoded by `decode`.
 */
export async function runPlayerScript<T>(
  redis: RedisClient,
  workspaceId: string,
  userId: string,
  idempotency: WriteContext['idempotency'],
  script: (idempotencyKey: string) => Promise<RawReply>,
  decode: (raw: RawReply) => Replayable<T>,
): Promise<KeptReply<T>> {
  const record = keys.playerIdempotency(workspaceId, userId, idempotency?.keyHash ?? '-');
  const decoded = decode(await changing(redis, () => script(record)));
  if (idempotency === undefined || decoded.replayed) return { ...decoded, keptBytes: 0 };
  return { ...decoded, keptBytes: keptRecordBytes(record, idempotency.fingerprint.length + 1 + JSON.stringify(decoded.raw).length) };
}
