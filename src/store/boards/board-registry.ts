// A workspace's registry of leaderboards: board name -> config, one hash in the workspace's own
// slot (keys.boardRegistry), so the most boards a workspace may have is checked and a board
// added in one step (lua/board-register.lua). The periods a board keeps are copied into the
// board's own meta (`p`), which its write script checks; the registry is where they are set.
import { isPeriod, type Period } from '../../domain/periods.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { canonicalPeriods, decodeBoardRegister } from './board-protocol.js';

export interface BoardConfig {
  /** The periods every write goes to, in PERIODS order. */
  readonly periods: readonly Period[];
  /** The player key whose stored value the board follows (docs/leaderboards.md), if any. */
  readonly follow?: { readonly key: string } | undefined;
  readonly createdAt: string;
}

/** A board's config as the registry stores it, with its name. */
export interface RegisteredBoard extends BoardConfig {
  readonly board: string;
}

export const DEFAULT_PERIODS: readonly Period[] = ['all'];

export { canonicalPeriods, parsePeriodsField, periodsField } from './board-protocol.js';

function parseConfig(json: string): BoardConfig {
  const raw = JSON.parse(json) as { periods?: unknown; follow?: { key?: unknown } | null; createdAt?: unknown };
  const periods = Array.isArray(raw.periods) ? canonicalPeriods(raw.periods.filter(isPeriod)) : [...DEFAULT_PERIODS];
  const follow = raw.follow && typeof raw.follow.key === 'string' ? { key: raw.follow.key } : undefined;
  return { periods, follow, createdAt: typeof raw.createdAt === 'string' ? raw.createdAt : '' };
}

export type RegisterResult =
  | { readonly ok: true; readonly created: boolean; readonly config: BoardConfig }
  | { readonly ok: false; readonly boards: number };

/** A change of one field of a board's config, made in the same step as its registration. */
export type ConfigChange =
  | { readonly field: 'periods'; readonly periods: readonly Period[] }
  | { readonly field: 'follow'; readonly key: string | null };

export class BoardRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxBoards: number,
  ) {}

  /**
   * Registers the board (with the default config, unless `change` sets a field) or returns its
   * config; `ok: false` when the workspace has its most boards already.
   */
  async register(workspaceId: string, board: string, nowMs: number, change?: ConfigChange): Promise<RegisterResult> {
    const initial = JSON.stringify({ periods: DEFAULT_PERIODS, createdAt: new Date(nowMs).toISOString() });
    let field = '';
    let value = 'null';
    if (change?.field === 'periods') {
      field = 'periods';
      value = JSON.stringify(canonicalPeriods(change.periods));
    } else if (change?.field === 'follow') {
      field = 'follow';
      value = change.key === null ? 'null' : JSON.stringify({ key: change.key });
    }
    const reply = decodeBoardRegister(await this.redis.boardRegister(keys.boardRegistry(workspaceId), board, String(this.maxBoards), initial, field, value));
    if (!reply.ok) return reply;
    return { ok: true, created: reply.created, config: parseConfig(reply.configJson) };
  }

  async get(workspaceId: string, board: string): Promise<BoardConfig | undefined> {
    const json = await this.redis.hget(keys.boardRegistry(workspaceId), board);
    return json === null ? undefined : parseConfig(json);
  }

  /** Every board of the workspace, by name. */
  async list(workspaceId: string): Promise<RegisteredBoard[]> {
    const all = await this.redis.hgetall(keys.boardRegistry(workspaceId));
    return Object.entries(all)
      .map(([board, json]) => ({ board, ...parseConfig(json) }))
      .sort((a, b) => (a.board < b.board ? -1 : a.board > b.board ? 1 : 0));
  }

  /** Removes the board from the registry; false when it was not there. */
  async remove(workspaceId: string, board: string): Promise<boolean> {
    return (await this.redis.hdel(keys.boardRegistry(workspaceId), board)) === 1;
  }

  /** The boards that follow a player key, for the write path's outbox (docs/leaderboards.md). */
  async followersOf(workspaceId: string, key: string): Promise<string[]> {
    return (await this.list(workspaceId)).filter((b) => b.follow?.key === key).map((b) => b.board);
  }
}
