// A leaderboard's rules without I/O: the shape of a board's name, how a sorted-set member
// carries the tie-break before the user id, and the page cursor.
//
// Ties: the player who reached a score first ranks higher. Redis orders equal scores by
// member, so the member starts with a fixed-width code of the write's sequence number in its
// board, inverted (lua/board-write.lua): an earlier write has a larger code, and comes first in
// the descending order (ZREVRANGE orders equal scores by member, descending). The score itself
// stays the player's exact score.
import { USER_ID_PATTERN_SOURCE } from './ids.js';

export const BOARD_NAME_PATTERN_SOURCE = '^[A-Za-z0-9_.-]{1,64}$';
const BOARD_NAME = new RegExp(BOARD_NAME_PATTERN_SOURCE);

export function isBoardName(raw: unknown): raw is string {
  return typeof raw === 'string' && BOARD_NAME.test(raw);
}

/** Characters of the sequence code at the start of a member (base 62: 62^8 writes a board). */
export const SEQUENCE_WIDTH = 8;
const SEQUENCE_CODE = /^[0-9A-Za-z]{8}$/;
const USER_ID = new RegExp(USER_ID_PATTERN_SOURCE);

/** The user id of a sorted-set member. */
export function userIdOfMember(member: string): string {
  return member.slice(SEQUENCE_WIDTH);
}

export function isMember(raw: string): boolean {
  return SEQUENCE_CODE.test(raw.slice(0, SEQUENCE_WIDTH)) && USER_ID.test(raw.slice(SEQUENCE_WIDTH));
}

export type Order = 'desc' | 'asc';

/** Where a page ends: the last entry's score (as Redis printed it) and member, in one order. */
export interface Cursor {
  readonly order: Order;
  readonly score: string;
  readonly member: string;
}

/** Scores as Redis prints them: what ZADD, ZCOUNT and ZSCORE read back as the same double. */
const SCORE_TEXT = /^-?(\d+(\.\d+)?([eE][-+]?\d+)?|inf)$/;

/** Opaque to clients: base64url of `<d|a> <score> <member>`. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.order === 'desc' ? 'd' : 'a'} ${cursor.score} ${cursor.member}`, 'latin1').toString('base64url');
}

/** The cursor a page handed out, or undefined when `text` is not one. */
export function decodeCursor(text: string): Cursor | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) return undefined;
  const parts = Buffer.from(text, 'base64url').toString('latin1').split(' ');
  if (parts.length !== 3) return undefined;
  const [order, score, member] = parts as [string, string, string];
  if ((order !== 'd' && order !== 'a') || !SCORE_TEXT.test(score) || !isMember(member)) return undefined;
  return { order: order === 'd' ? 'desc' : 'asc', score, member };
}
