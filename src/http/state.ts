// What the middleware chain leaves on ctx.state for the next link.
import type { Principal } from '../auth/authenticator.js';
import type { RateLimitResult } from '../store/rate-limiter.js';

export interface AppState {
  requestId: string;
  /** Time the request arrived, ms since the epoch: one clock reading per request. */
  startedAt: number;
  principal?: Principal;
  rateLimit?: RateLimitResult;
}
