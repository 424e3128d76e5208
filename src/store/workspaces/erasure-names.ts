// A workspace's erasure player names (docs/erasure.md): templates such as `Player_{userId}` that
// say which players an erasure of a user id also erases in the workspace, besides the player
// of that id. A game whose players are named after its store keys (the Luau facades: a
// ProfileStore's profile `Player_42`) sets them, so that an erasure reaches every copy. One
// string in the workspace's own slot (a JSON array), written whole and read whole; deleting the
// workspace deletes it with the slot's other records.
import { playerNamesOf } from '../../domain/erasure.js';
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export class ErasurePlayerNames {
  constructor(private readonly redis: RedisClient) {}

  /** The workspace's templates, in the order they were set ([] for none). */
  async of(workspaceId: string): Promise<string[]> {
    const json = await this.redis.get(keys.erasurePlayerNames(workspaceId));
    return json ? (JSON.parse(json) as string[]) : [];
  }

  /** Replaces the workspace's templates (checked by the caller); none deletes the key. */
  async set(workspaceId: string, templates: readonly string[]): Promise<void> {
    if (templates.length === 0) await this.redis.del(keys.erasurePlayerNames(workspaceId));
    else await this.redis.set(keys.erasurePlayerNames(workspaceId), JSON.stringify(templates));
  }

  /** For each workspace with templates, the players they name for this user (besides the user id's own). */
  async namesIn(workspaceIds: readonly string[], userId: string): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const workspaceId of workspaceIds) {
      const names = playerNamesOf(await this.of(workspaceId), userId);
      if (names.length > 0) out.set(workspaceId, names);
    }
    return out;
  }
}
