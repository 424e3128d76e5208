// The operator console's sign-ins (the signed-in browser behind the pds_console cookie) and its
// count of wrong sign-ins, in Redis so that every instance (and every worker) behind the ops port
// sees the same sign-ins. A sign-in is stored under the SHA-256 of its id, so a copy of the
// database holds no usable cookie. ("Session" in this service means a player's lock; the key
// and setting names that say session here are kept as they were, not to end sign-ins in place.)
import { keys } from '../keys.js';
import type { RedisClient } from '../redis/redis.js';
import { countFailure, type FailureCount } from './auth-failures.js';

export interface ConsoleSignInRecord {
  /** The token a state-changing request must echo in X-CSRF-Token. */
  readonly csrf: string;
  readonly createdAt: string;
  /** The address that signed in, for the audit trail. */
  readonly address: string;
}

export class ConsoleSignInStore {
  constructor(private readonly redis: RedisClient) {}

  async create(idHash: string, record: ConsoleSignInRecord, idleMs: number): Promise<void> {
    const key = keys.consoleSession(idHash);
    await this.redis.multi().hset(key, { ...record }).pexpire(key, idleMs).exec();
  }

  /** The sign-in, its idle time started again; undefined when it ended or never was. */
  async touch(idHash: string, idleMs: number): Promise<ConsoleSignInRecord | undefined> {
    const key = keys.consoleSession(idHash);
    // PEXPIRE first: a sign-in that expires between the two commands is simply not found.
    const [alive, fields] = await Promise.all([this.redis.pexpire(key, idleMs), this.redis.hgetall(key)]);
    if (alive !== 1 || !fields['csrf']) return undefined;
    return { csrf: fields['csrf'], createdAt: fields['createdAt'] ?? '', address: fields['address'] ?? '' };
  }

  async remove(idHash: string): Promise<boolean> {
    return (await this.redis.del(keys.consoleSession(idHash))) === 1;
  }

  /**
   * Counts one sign-in attempt from `address` (sign-in counts before it looks at the token) and
   * answers the window's count, this one included, and the ms left of the window.
   */
  countSignIn(address: string, windowMs: number): Promise<FailureCount> {
    return countFailure(this.redis, keys.consoleSignInFailures(address), windowMs);
  }

  async clearFailures(address: string): Promise<void> {
    await this.redis.del(keys.consoleSignInFailures(address));
  }
}
