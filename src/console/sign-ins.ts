// Sign-in, its upkeep and sign-out of the operator console: the admin token is exchanged once
// for a random sign-in id (the cookie) and a CSRF token (kept by the page in memory); the sign-in
// lasts while it is used within CONSOLE_SESSION_IDLE_SECONDS. Sign-ins are
// counted per address before the token is looked at, and one past CONSOLE_SIGNIN_ATTEMPTS in a
// window is answered 429 without it, even for the right token: guessing costs a window per few
// tries, however many guesses are sent at once. A right token clears its address's count.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConsoleConfig } from '../config.js';
import { AppError, ErrorCode, unauthorized } from '../errors.js';
import type { ConsoleSignInRecord, ConsoleSignInStore } from '../store/installation/console-sign-ins.js';

export interface SignedIn {
  /** The cookie's value: a bearer credential, kept in Redis only as its SHA-256. */
  readonly signInId: string;
  readonly csrf: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();
const idHash = (signInId: string) => sha256(signInId).toString('hex');
/** 32 random bytes, base64url: the id is a bearer credential and must not be guessable. */
const randomToken = () => randomBytes(32).toString('base64url');
const SIGN_IN_ID = /^[\w-]{43}$/;

export class ConsoleSignIns {
  private readonly expected: Buffer;

  constructor(
    adminToken: string,
    private readonly store: ConsoleSignInStore,
    readonly config: ConsoleConfig,
    private readonly clock: () => number = Date.now,
  ) {
    this.expected = sha256(adminToken);
  }

  async signIn(token: string, address: string): Promise<SignedIn> {
    // Counted first, in one atomic step, then judged by the count it made: checking the count,
    // then comparing, then counting let 64 of 100 concurrent wrong tokens through a limit of 5.
    const attempt = await this.store.countSignIn(address, this.config.signInWindowMs);
    if (attempt.count > this.config.signInAttempts) {
      const seconds = Math.max(1, Math.ceil(attempt.resetMs / 1000));
      throw new AppError(ErrorCode.RATE_LIMITED, `Too many wrong admin tokens from this address: try again in ${seconds} s`, {
        headers: { 'Retry-After': String(seconds) },
      });
    }
    // Digests compared, so neither the length nor the content of the token leaks through timing.
    if (!token || !timingSafeEqual(sha256(token), this.expected)) {
      const left = this.config.signInAttempts - attempt.count;
      throw unauthorized(`Wrong admin token (${left} ${left === 1 ? 'try' : 'tries'} left before sign-in pauses for this address)`);
    }
    await this.store.clearFailures(address);
    const signInId = randomToken();
    const csrf = randomToken();
    await this.store.create(idHash(signInId), { csrf, address, createdAt: new Date(this.clock()).toISOString() }, this.config.sessionIdleMs);
    return { signInId, csrf };
  }

  /** The live sign-in of this id, its idle time started again. */
  resume(signInId: string | undefined): Promise<ConsoleSignInRecord | undefined> {
    if (!signInId || !SIGN_IN_ID.test(signInId)) return Promise.resolve(undefined);
    return this.store.touch(idHash(signInId), this.config.sessionIdleMs);
  }

  signOut(signInId: string): Promise<boolean> {
    return this.store.remove(idHash(signInId));
  }
}

export function sameToken(given: string, expected: string): boolean {
  return given.length > 0 && timingSafeEqual(sha256(given), sha256(expected));
}
