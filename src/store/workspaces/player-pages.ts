// The public API's list of a workspace's players (GET /api/v1/players): pages of the players list
// (keys.workspacePlayers, player-index.ts) walked with ZSCAN, each player checked against its own
// hash before it is shown, so a player erased or whose data was deleted entirely (still on the
// list until its instance's note arrives) is never listed. With `hasKey`, only players holding
// that data key: the DataStoreService facade's ListKeysAsync lists a data store's keys this way.
//
// Why ZSCAN and not the admin's newest-first order: a walk must see every player, and a write
// moves a player to the top of a newest-first order (past the cursor, so it would be missed),
// while it leaves its place in the hash table alone. SCAN's guarantee holds: a player on the list
// from the first page to the last is listed. The order is the table's, not a useful one.
//
// A page holds at most `limit` players: ZSCAN cannot stop inside a reply (a small set, in a
// listpack, comes whole in one), so each reply is sorted by user id and a page that ends inside
// one names the reply's cursor, its COUNT and the last player looked at; the next page asks
// again for that reply and goes on after that player. A reply asked again holds the same
// buckets; a player added to them meanwhile may be missed if its id sorts before, as a player
// added during any SCAN may be (one seen twice is possible too, when the table grows).
//
// Each page does bounded work, whatever it finds: at most PAGE_SCAN_BUDGET elements scanned and
// PAGE_CHECK_BUDGET players checked (one or two commands each, pipelined per node); a rare
// prefix or key may answer fewer players than `limit`, even none, with a `next` to go on from.
import { badRequest } from '../../errors.js';
import { keys } from '../keys.js';
import { PLAYER_META } from '../players/player-data.js';
import type { RedisClient } from '../redis/redis.js';

export const PLAYERS_PAGE_DEFAULT = 100;
export const PLAYERS_PAGE_MAX = 1000;
/** Elements ZSCAN is asked to look at per page (the sum of its COUNTs): a rare prefix answers in pages. */
export const PAGE_SCAN_BUDGET = 5000;
/** Players checked against their hashes per page (about 1 µs of Redis each: docs/api.md has the measurement). */
export const PAGE_CHECK_BUDGET = 2000;
const FIRST_COUNT = 100;
const MAX_COUNT = 1000;
/** Players checked in one pipelined round at least: a sparse key filter does not take one round trip per player. */
const MIN_ROUND = 64;

export interface PlayersPageQuery {
  /** User id prefix (characters of user ids only: no glob character reaches ZSCAN MATCH). */
  readonly prefix?: string | undefined;
  /** Only players holding this data key. */
  readonly hasKey?: string | undefined;
  readonly limit: number;
  /** The `next` of the page before. */
  readonly cursor?: string | undefined;
}

export interface PlayersPage {
  readonly players: { readonly userId: string; readonly lastWriteMs: number }[];
  /** Pass as `cursor` for the next page; null once the walk is over. */
  readonly next: string | null;
}

interface Position {
  /** ZSCAN's cursor of the reply being read. */
  readonly scan: string;
  /** The COUNT it was asked with. */
  readonly count: number;
  /** The last player of that reply already looked at ('' for none). */
  readonly after: string;
}

/** `<scan cursor>:<count>:<last user id looked at>`. */
function positionOf(cursor: string | undefined, limit: number): Position {
  if (cursor === undefined) return { scan: '0', count: Math.min(MAX_COUNT, Math.max(FIRST_COUNT, limit)), after: '' };
  const match = /^(\d{1,20}):(\d{1,4}):([A-Za-z0-9_.-]{0,64})$/.exec(cursor);
  const count = match ? Number(match[2]) : 0;
  // Redis refuses a cursor past 64 bits with an error, which would be a 500 here.
  if (!match || count < 1 || count > MAX_COUNT || BigInt(match[1]!) >= 2n ** 64n) throw badRequest('Invalid field "cursor" in query: must be the "next" of the page before');
  return { scan: match[1]!, count, after: match[3]! };
}

export class PlayerPages {
  constructor(private readonly redis: RedisClient) {}

  async page(workspaceId: string, query: PlayersPageQuery): Promise<PlayersPage> {
    const list = keys.workspacePlayers(workspaceId);
    let { scan, count, after } = positionOf(query.cursor, query.limit);
    const players: { userId: string; lastWriteMs: number }[] = [];
    let scanned = 0;
    let checked = 0;
    for (;;) {
      const [nextScan, raw] = await this.redis.zscan(list, scan, 'MATCH', `${query.prefix ?? ''}*`, 'COUNT', count);
      scanned += count;
      const reply: { userId: string; ms: number }[] = [];
      for (let i = 0; i < raw.length; i += 2) if (raw[i]! > after) reply.push({ userId: raw[i]!, ms: Number(raw[i + 1]) });
      reply.sort((a, b) => (a.userId < b.userId ? -1 : 1));
      let looked = 0;
      while (looked < reply.length && players.length < query.limit && checked < PAGE_CHECK_BUDGET) {
        const round = reply.slice(looked, looked + Math.min(PAGE_CHECK_BUDGET - checked, Math.max(query.limit - players.length, MIN_ROUND)));
        const held = await this.holding(workspaceId, round, query.hasKey);
        for (let i = 0; i < round.length && players.length < query.limit; i++) {
          looked++;
          checked++;
          if (held[i]) players.push({ userId: round[i]!.userId, lastWriteMs: round[i]!.ms });
        }
      }
      if (looked < reply.length) return { players, next: `${scan}:${count}:${reply[looked - 1]?.userId ?? after}` };
      if (nextScan === '0') return { players, next: null };
      scan = nextScan;
      after = '';
      // Few players in the replies so far (a rare prefix): look further per call.
      count = Math.min(MAX_COUNT, count * 4);
      if (players.length >= query.limit || checked >= PAGE_CHECK_BUDGET || scanned + count > PAGE_SCAN_BUDGET) {
        return { players, next: `${scan}:${count}:` };
      }
    }
  }

  /** Whether each player has data (or, with `key`, holds that key), one pipelined round. */
  private async holding(workspaceId: string, players: readonly { userId: string }[], key: string | undefined): Promise<boolean[]> {
    if (key !== undefined) {
      const held = await Promise.all(players.map((p) => this.redis.hexists(keys.player(workspaceId, p.userId), key)));
      return held.map((n) => n === 1);
    }
    // A player whose data was deleted entirely keeps its hash (its version) with no data keys; one
    // written before the counts existed has data if it has a hash.
    const read = await Promise.all(
      players.flatMap((p) => [this.redis.exists(keys.player(workspaceId, p.userId)), this.redis.hget(keys.player(workspaceId, p.userId), PLAYER_META.keys)]),
    );
    return players.map((_, i) => read[2 * i] === 1 && read[2 * i + 1] !== '0');
  }
}
