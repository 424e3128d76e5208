// Reads and writes players' data: one hash per workspace and player (see keys.ts), each field
// holding `[updated_at_ms,<JSON>]` (see domain/entry.ts). Values travel as JSON text, never
// re-parsed on the way out.
import { encodeEntry, decodeEntry, type StoredEntry } from '../domain/entry.js';
import { AppError, ErrorCode } from '../errors.js';
import { keys } from './keys.js';
import type { RedisClient } from './redis.js';
import { scriptError } from './scripts.js';

export type GetResult =
  | { readonly found: true; readonly entry: StoredEntry }
  | { readonly found: false; readonly playerExists: boolean };

function corrupt(key: string): AppError {
  return new AppError(ErrorCode.INTERNAL, `Stored entry "${key}" is not in the stored form`);
}

export class PlayerDataStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxKeysPerPlayer: number,
  ) {}

  async get(workspaceId: string, userId: string, key: string): Promise<GetResult> {
    const hash = keys.player(workspaceId, userId);
    const stored = await this.redis.hget(hash, key);
    if (stored === null) {
      return { found: false, playerExists: (await this.redis.exists(hash)) === 1 };
    }
    const entry = decodeEntry(stored);
    if (!entry) throw corrupt(key);
    return { found: true, entry };
  }

  /** Every entry of the player as [key, value JSON] pairs; empty when the player has none. */
  async getAll(workspaceId: string, userId: string): Promise<Array<[string, string]>> {
    const all = await this.redis.hgetall(keys.player(workspaceId, userId));
    const out: Array<[string, string]> = [];
    for (const field of Object.keys(all)) {
      const entry = decodeEntry(all[field]!);
      if (!entry) throw corrupt(field);
      out.push([field, entry.valueJson]);
    }
    return out;
  }

  /** Every entry of the player with its update time, for support staff's export. */
  async getAllEntries(workspaceId: string, userId: string): Promise<Array<[string, StoredEntry]>> {
    const all = await this.redis.hgetall(keys.player(workspaceId, userId));
    return Object.keys(all).map((field) => {
      const entry = decodeEntry(all[field]!);
      if (!entry) throw corrupt(field);
      return [field, entry];
    });
  }

  async set(workspaceId: string, userId: string, key: string, valueJson: string, nowMs: number): Promise<void> {
    const result = await this.redis.setEntry(
      keys.player(workspaceId, userId),
      key,
      encodeEntry(valueJson, nowMs),
      String(this.maxKeysPerPlayer),
    );
    if (result !== 1) throw scriptError(result, { maxEntries: this.maxKeysPerPlayer });
  }

  /** Adds `amount` (to `defaultValue` when the key is new) atomically; returns the new value. */
  async increment(
    workspaceId: string,
    userId: string,
    key: string,
    amount: number,
    defaultValue: number,
    nowMs: number,
  ): Promise<number> {
    const result = await this.redis.incrementEntry(
      keys.player(workspaceId, userId),
      key,
      String(amount),
      String(defaultValue),
      String(nowMs),
      String(this.maxKeysPerPlayer),
    );
    if (typeof result === 'number') throw scriptError(result, { maxEntries: this.maxKeysPerPlayer });
    return Number(result);
  }

  /** Removes one key; returns how many were removed (0 or 1). */
  async deleteKey(workspaceId: string, userId: string, key: string): Promise<number> {
    return this.redis.hdel(keys.player(workspaceId, userId), key);
  }

  /** Removes all of the player's data; returns how many keys it held. */
  async deletePlayer(workspaceId: string, userId: string): Promise<number> {
    const hash = keys.player(workspaceId, userId);
    const replies = await this.redis.multi().hlen(hash).unlink(hash).exec();
    const first = replies?.[0];
    if (!first || first[0]) throw first?.[0] ?? new Error('MULTI was discarded');
    return first[1] as number;
  }
}
