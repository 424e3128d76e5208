// Answers kept outside a player's slot that name the player: a many-player request's whole
// answer kept in its idempotency claim (sessions and messages of up to 100 players), a
// leaderboard write's answer kept in the board's slot (the player's scores). The erasure finds
// a player's keys by its tag, so each such record is noted in the player's own slot
// (keys.playerKeptElsewhere) before it is written, and the erasure deletes what the note names
// (lua/erase-player-keys.lua answers the names in the step that deletes the note). Noted before:
// a record written without its note could outlive an erasure; a note without its record (the
// write failed) deletes nothing. The note holds key names as they were built when written, so
// a later change of a key's layout still finds the records made before it.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/** Slack for the clocks of several instances: a note outlives its record by this much. */
const CLOCK_MARGIN_MS = 60_000;

/**
 * Notes that `record` (a key in another slot) keeps an answer naming each of `userIds` until
 * `expiresAtMs`: one MULTI per player (its own slot), those past their time dropped on the way,
 * the note living as long as its longest record.
 */
export async function noteKeptElsewhere(
  redis: RedisClient,
  workspaceId: string,
  userIds: readonly string[],
  record: string,
  expiresAtMs: number,
  nowMs = Date.now(),
): Promise<void> {
  await Promise.all(
    userIds.map(async (userId) => {
      const note = keys.playerKeptElsewhere(workspaceId, userId);
      const until = expiresAtMs + CLOCK_MARGIN_MS;
      const replies = await redis
        .multi()
        .zremrangebyscore(note, '-inf', String(nowMs - CLOCK_MARGIN_MS))
        .zadd(note, 'GT', String(expiresAtMs), record)
        // A new note has no expiry (NX sets it); an older one is only ever lengthened (GT).
        .pexpireat(note, until, 'NX')
        .pexpireat(note, until, 'GT')
        .exec();
      const failed = replies?.find(([err]) => err);
      if (!replies || failed) throw failed?.[0] ?? new Error('kept-elsewhere MULTI was discarded');
    }),
  );
}

/** Deletes records a player's notes named (each in a slot of its own); answers how many were there. */
export async function deleteKeptElsewhere(redis: RedisClient, records: readonly string[]): Promise<number> {
  const deleted = await Promise.all([...new Set(records)].map((record) => redis.unlink(record)));
  return deleted.reduce((sum, n) => sum + n, 0);
}
