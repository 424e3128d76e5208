// Builds the public Koa app from its dependencies: the middleware order and the routes,
// with no I/O of its own.
import Router from '@koa/router';
import Koa from 'koa';
import type { Authenticator } from './auth/authenticator.js';
import type { LastUsedRecorder } from './auth/last-used.js';
import type { Config } from './config.js';
import type { Gate } from './gate/gate.js';
import { callerKey, proxyTrustOf, resolveClientAddress } from './gate/client-address.js';
import { ByteBudget } from './http/byte-budget.js';
import { chain } from './http/chain.js';
import { authenticate } from './http/middleware/authenticate.js';
import { errorHandler } from './http/middleware/errors.js';
import { gateRequests } from './http/middleware/gate.js';
import { observeRequests } from './http/middleware/metrics.js';
import type { TrafficStats } from './store/installation/traffic-stats.js';
import { rateLimit } from './http/middleware/rate-limit.js';
import { recheckKey } from './http/middleware/recheck-key.js';
import { requestLog } from './http/middleware/request-log.js';
import { batchRoutes } from './http/routes/batch.js';
import { dataRoutes } from './http/routes/data.js';
import { leaderboardRoutes } from './http/routes/leaderboards.js';
import { sessionRoutes } from './http/routes/sessions.js';
import { messageRoutes } from './http/routes/messages.js';
import { versionRoutes } from './http/routes/versions.js';
import { openApiRoutes } from './http/routes/openapi.js';
import { pingRoutes } from './http/routes/ping.js';
import { playerRoutes } from './http/routes/players.js';
import { robloxWebhookRouter } from './http/routes/roblox-webhook.js';
import { FailureBudget } from './auth/failure-budget.js';
import type { ErasureRequests } from './erasure/requests.js';
import type { AppState } from './http/state.js';
import type { Logger } from './logger.js';
import { metrics as processMetrics, type ServiceMetrics } from './metrics.js';
import type { PlayerWrites } from './saves/player-writes.js';
import type { PlayerMessages } from './saves/player-messages.js';
import type { BoardWrites } from './boards/board-writes.js';
import type { LeaderboardStore } from './store/boards/leaderboard-store.js';
import type { PlayerDataStore } from './store/players/player-data.js';
import type { PlayerPages } from './store/workspaces/player-pages.js';
import type { RateLimiter } from './store/workspaces/rate-limiter.js';
import type { WorkspaceStore } from './store/workspaces/workspaces.js';

export const API_PREFIX = '/api/v1';

export interface AppDeps {
  readonly config: Config;
  readonly logger: Logger;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly players: PlayerDataStore;
  /** GET /players: pages of the workspace's players list. */
  readonly playerPages: PlayerPages;
  /** Every write of the public API: versions, sessions, idempotency keys. */
  readonly writes: PlayerWrites;
  /** Leaderboards: reads from the store, writes through their quota and idempotency keys. */
  readonly boards: LeaderboardStore;
  readonly boardWrites: BoardWrites;
  /** Messages to players: sent through the quota and idempotency keys, acknowledged by saves. */
  readonly messages: PlayerMessages;
  /** Read by ping, which answers from Redis rather than from the key cache. */
  readonly workspaces: WorkspaceStore;
  /** Defaults to the process-wide registry. */
  readonly metrics?: ServiceMetrics;
  /** Platform-only access; runs before the router, so it covers every path. */
  readonly gate?: Gate;
  /** Records each key's last use in memory, for batched writes; optional in tests. */
  readonly lastUsed?: LastUsedRecorder;
  /** Each request's one clock reading (`startedAt`: updated_at, restore points); tests move it. */
  readonly clock?: () => number;
  /** Records erasure requests: needed when ROBLOX_WEBHOOK_SECRET turns the platform's webhook on. */
  readonly erasures?: Pick<ErasureRequests, 'request'>;
  /** Counts each answer for the console's overview (store/installation/traffic-stats.ts); optional in tests. */
  readonly traffic?: TrafficStats;
}

export function buildApp(deps: AppDeps): Koa<AppState> {
  const { config, logger } = deps;
  const app = new Koa<AppState>();
  // Errors are answered by errorHandler; what reaches koa's own handler is a socket problem.
  app.on('error', (err: unknown) => logger.debug({ err }, 'connection error'));

  app.use(requestLog(logger, deps.clock));
  app.use(observeRequests(deps.metrics ?? processMetrics, deps.traffic));
  app.use(errorHandler(logger, config.limits.maxBodyBytes));
  const trust = proxyTrustOf(config.gate);
  const callerOf = (ctx: Koa.Context) =>
    callerKey(resolveClientAddress(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'], trust));

  // The platform's webhook comes before the gate: its caller is the platform's webhook
  // service, which the gate's checks (made for game servers) would refuse or ban. Its
  // signature is its authentication, with its own budget of failures per address.
  const webhookSecret = config.robloxWebhook.secret;
  if (webhookSecret !== undefined) {
    if (!deps.erasures) throw new Error('ROBLOX_WEBHOOK_SECRET is set but the app was built without erasures');
    const webhook = robloxWebhookRouter(API_PREFIX, {
      config: { ...config.robloxWebhook, secret: webhookSecret },
      erasures: deps.erasures,
      logger,
      callerOf,
      budget: new FailureBudget(config.authFailuresPerMinute),
    });
    app.use(webhook.routes());
    app.use(webhook.allowedMethods());
  }
  if (deps.gate) app.use(gateRequests(deps.gate));

  app.use(openApiRoutes(API_PREFIX));

  // Case-sensitive: /API/V1/... is not the API.
  const api = new Router<AppState>({ prefix: API_PREFIX, sensitive: true });
  // Every route starts with these, in each route's own chain (see http/chain.ts); a path no
  // route matches (404, 405) is answered without them.
  // One byte budget for the instance (http/byte-budget.ts): a large body is charged to its
  // workspace once authenticated and counted, before it is read or as it decodes; large
  // answers when they are sent (http/json.ts), scripts' copies once they are made.
  const budget = new ByteBudget(config.limits.workspaceBytesPerSecond, config.limits.maxPlayerBytes);
  const guard = chain(authenticate(deps.authenticator, deps.lastUsed, callerOf), rateLimit(deps.limiter, config), budget.requests(config.limits.maxBodyBytes));
  pingRoutes(api, guard, deps.workspaces);
  const recheck = recheckKey(deps.authenticator);
  dataRoutes(api, { guard, recheck, players: deps.players, writes: deps.writes, config });
  batchRoutes(api, { guard, recheck, writes: deps.writes, config });
  sessionRoutes(api, { guard, recheck, players: deps.players, writes: deps.writes, config });
  leaderboardRoutes(api, { guard, recheck, boards: deps.boards, boardWrites: deps.boardWrites, config });
  messageRoutes(api, { guard, recheck, messages: deps.messages, config });
  versionRoutes(api, guard, deps.players);
  playerRoutes(api, guard, deps.playerPages);

  app.use(api.routes());
  app.use(api.allowedMethods());
  return app;
}
