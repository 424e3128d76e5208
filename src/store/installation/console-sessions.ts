// The operator console's sessions and its count of wrong sign-ins, in Redis so that every
// instance (and every worker) behind the ops port sees the same sessions. A session is stored
// under the SHA-256 of its id, so a copy of the database holds no usable cookie.
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';

export interface ConsoleSessionRecord {
  /** The token a state-changing request must echo in X-CSRF-Token. */
  readonly csrf: string;
  readonly createdAt: string;
  /** The address that signed in, for the audit trail. */
  readonly address: string;
}

export class ConsoleSessionStore {
  constructor(private readonly redis: RedisClient) {}

  async create(idHash: string, record: ConsoleSessionRecord, idleMs: number): Promise<void> {
    const key = keys.consoleSession(idHash);
    await this.redis.multi().hset(key, { ...record }).pexpire(key, idleMs).exec();
  }

  /** The session, its idle time started again; undefined when it ended or never was. */
  async touch(idHash: string, idleMs: number): Promise<ConsoleSessionRecord | undefined> {
    const key = keys.consoleSession(idHash);
    // PEXPIRE first: a session that expires between the two commands is simply not found.
    const [alive, fields] = await Promise.all([this.redis.pexpire(key, idleMs), this.redis.hgetall(key)]);
    if (alive !== 1 || !fields['csrf']) return undefined;
    return { csrf: fields['csrf'], createdAt: fields['createdAt'] ?? '', address: fields['address'] ?? '' };
  }

  async remove(idHash: string): Promise<boolean> {
    return (await this.redis.del(keys.consoleSession(idHash))) === 1;
  }

  /** Wrong tokens from `address` in the current window, and the ms left of that window. */
  async failures(address: string): Promise<{ count: number; resetMs: number }> {
    const key = keys.consoleSignInFailures(address);
    const [count, ttl] = await Promise.all([this.redis.get(key), this.redis.pttl(key)]);
    return { count: Number(count ?? 0), resetMs: Math.max(ttl, 0) };
  }

  /**
   * Counts one wrong token. A fixed window: the counter is made with its TTL; one that lost its
   * TTL (PTTL -1) is given one again, so a counter can never block an address for ever.
   */
  async addFailure(address: string, windowMs: number): Promise<number> {
    const key = keys.consoleSignInFailures(address);
    const replies = await this.redis.multi().set(key, '0', 'PX', windowMs, 'NX').incr(key).pttl(key).exec();
    const count = Number(replies?.[1]?.[1] ?? 0);
    if (replies?.[2]?.[1] === -1) await this.redis.pexpire(key, windowMs);
    return count;
  }

  async clearFailures(address: string): Promise<void> {
    await this.redis.del(keys.consoleSignInFailures(address));
  }
}
