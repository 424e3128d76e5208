// Which workspace serves each of the platform's games (universe ids): the webhook's erasure
// requests name games, and the job erases the player in the workspaces serving them. One hash
// for the installation, changed by one script (lua/set-games.lua) so a game is never served by
// two workspaces.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export type SetGamesResult = { readonly ok: true; readonly removed: number; readonly added: number } | { readonly ok: false; readonly gameId: string; readonly servedBy: string };

export class GameMap {
  constructor(private readonly redis: RedisClient) {}

  async set(workspaceId: string, gameIds: readonly string[]): Promise<SetGamesResult> {
    const [written, a, b] = await this.redis.setGames(keys.games(), workspaceId, ...gameIds);
    return Number(written) === 1 ? { ok: true, removed: Number(a), added: Number(b) } : { ok: false, gameId: String(a), servedBy: String(b) };
  }

  /** Every game -> workspace. The map is small (a few entries a workspace): read whole. */
  all(): Promise<Record<string, string>> {
    return this.redis.hgetall(keys.games());
  }

  async of(workspaceId: string): Promise<string[]> {
    return Object.entries(await this.all())
      .filter(([, ws]) => ws === workspaceId)
      .map(([game]) => game)
      .sort((a, b) => a.length - b.length || a.localeCompare(b));
  }

  /** The workspaces serving these games, and the games no workspace serves. */
  async resolve(gameIds: readonly string[]): Promise<{ workspaceIds: string[]; unknown: string[] }> {
    const owners = gameIds.length === 0 ? [] : await this.redis.hmget(keys.games(), ...gameIds);
    const workspaceIds = new Set<string>();
    const unknown: string[] = [];
    owners.forEach((owner, i) => (owner ? workspaceIds.add(owner) : unknown.push(gameIds[i]!)));
    return { workspaceIds: [...workspaceIds].sort(), unknown };
  }
}
