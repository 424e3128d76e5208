// Answers kept outside a player's slot that name the player: a many-player request's whole
// answer kept in its idempotency claim (sessions and messages of up to 100 players), a
// leaderboard write's answer kept in the board's slot (the player's scores). The erasure finds
// a player's keys by its tag, so each such record is noted in the player's own slot
// (keys.playerKeptElsewhere) before it is written, and the erasure deletes what the note names
// (lua/erase-player-keys.lua answers the members in the step that deletes the note). Noted
// before: a record written without its note could outlive an erasure; a note without its
// record (the write failed) deletes nothing.
//
// A member names its record shortly (`c:<key hash>` a claim, `b:<board>:<key hash>` a board's
// answer) and the erasure builds the key through keys.ts: a member under 64 bytes keeps the
// sorted set in Redis's compact encoding, about 220 bytes a note where a full key name as the
// member (82 bytes) made it a skiplist of 1,120 (measured with 20,000 notes on Redis 7.0).
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

/** About what a player's note of one record costs Redis, as measured above: counted with the answer it notes. */
export const KEPT_NOTE_BYTES = 220;

/** Slack for the clocks of several instances: a note outlives its record by this much. */
const CLOCK_MARGIN_MS = 60_000;

/** A record kept elsewhere: a request's idempotency claim, or a board write's kept answer. */
export type KeptRecord = { readonly claim: string } | { readonly board: string; readonly keyHash: string };

const memberOf = (record: KeptRecord): string => ('claim' in record ? `c:${record.claim}` : `b:${record.board}:${record.keyHash}`);

/** The key of a note's member in the workspace; undefined for a member of no known form. */
function recordKey(workspaceId: string, member: string): string | undefined {
  const claim = /^c:([^:]+)$/.exec(member);
  if (claim) return keys.idempotencyClaim(workspaceId, claim[1]!);
  const board = /^b:([^:]+):([^:]+)$/.exec(member);
  return board ? keys.boardIdempotency(workspaceId, board[1]!, board[2]!) : undefined;
}

/**
 * Notes that `record` keeps an answer naming each of `userIds` until `expiresAtMs`: one MULTI
 * per player (its own slot), those past their time dropped on the way, the note living as long
 * as its longest record.
 */
export async function noteKeptElsewhere(
  redis: RedisClient,
  workspaceId: string,
  userIds: readonly string[],
  record: KeptRecord,
  expiresAtMs: number,
  nowMs = Date.now(),
): Promise<void> {
  const member = memberOf(record);
  await Promise.all(
    userIds.map(async (userId) => {
      const note = keys.playerKeptElsewhere(workspaceId, userId);
      const until = expiresAtMs + CLOCK_MARGIN_MS;
      const replies = await redis
        .multi()
        .zremrangebyscore(note, '-inf', String(nowMs - CLOCK_MARGIN_MS))
        .zadd(note, 'GT', String(expiresAtMs), member)
        // A new note has no expiry (NX sets it); an older one is only ever lengthened (GT).
        .pexpireat(note, until, 'NX')
        .pexpireat(note, until, 'GT')
        .exec();
      const failed = replies?.find(([err]) => err);
      if (!replies || failed) throw failed?.[0] ?? new Error('kept-elsewhere MULTI was discarded');
    }),
  );
}

/** The members of a player's note (before the erasure's script deletes it, so that an attempt cut short between the two loses none). */
export function readKeptElsewhere(redis: RedisClient, workspaceId: string, userId: string): Promise<string[]> {
  return redis.zrange(keys.playerKeptElsewhere(workspaceId, userId), '0', '-1');
}

/** Deletes the records a player's note named (each in a slot of its own); answers how many were there. */
export async function deleteKeptElsewhere(redis: RedisClient, workspaceId: string, members: readonly string[]): Promise<number> {
  const records = new Set(members.map((member) => recordKey(workspaceId, member)).filter((key): key is string => key !== undefined));
  const deleted = await Promise.all([...records].map((key) => redis.unlink(key)));
  return deleted.reduce((sum, n) => sum + n, 0);
}
