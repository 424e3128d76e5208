// What the middleware chain leaves on ctx.state for the next link.
import type { Principal } from '../auth/authenticator.js';
import type { RateLimitResult } from '../store/workspaces/rate-limiter.js';

export interface AppState {
  requestId: string;
  /** Time the request arrived, ms since the epoch: one clock reading per request. */
  startedAt: number;
  /** Set when the body did not arrive with the headers: the request waited for it (recheck-key.ts). */
  bodyWaited?: boolean;
  principal?: Principal;
  rateLimit?: RateLimitResult;
}
