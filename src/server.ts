// Wires a running service from its config: Redis connections, stores, caches, the app and
// the HTTP listener. main.ts, the tests and the benchmark all start the service through here.
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { buildApp } from './app.js';
import { answerClientErrors } from './http/client-error.js';
import { closeSilentConnections } from './http/silent-connections.js';
import { Authenticator } from './auth/authenticator.js';
import { LastUsedRecorder } from './auth/last-used.js';
import { DEFAULT_REDIS_URL, type Config } from './config.js';
import type { Logger } from './logger.js';
import { metrics } from './metrics.js';
import { instrumentRedis } from './store/redis/instrument.js';
import { warnOfFullCoverage } from './store/redis/cluster-settings.js';
import { failoverLogOf } from './store/redis/failover-log.js';
import { ApiKeyStore } from './store/workspaces/api-keys.js';
import { EventSubscriber } from './store/redis/events.js';
import { KeyUsageStore } from './store/workspaces/key-usage.js';
import { PlayerIndexRecorder } from './store/workspaces/player-index.js';
import { PlayerPages } from './store/workspaces/player-pages.js';
import { TrafficStats } from './store/installation/traffic-stats.js';
import { PlayerDataStore, playerLimitsOf } from './store/players/player-data.js';
import { IdempotencyClaims } from './saves/idempotency.js';
import { PlayerWrites } from './saves/player-writes.js';
import { PlayerMessages } from './saves/player-messages.js';
import { FollowedWrites } from './boards/followed-writes.js';
import { PlayerMessagesStore } from './store/players/player-messages.js';
import { StorageQuota } from './saves/storage-quota.js';
import { QuotaWarnings } from './saves/quota-warnings.js';
import { StorageUsage } from './store/workspaces/storage-usage.js';
import { HistorySweep } from './saves/history-sweep.js';
import { BoardWrites } from './boards/board-writes.js';
import { BoardRegistry } from './store/boards/board-registry.js';
import { LeaderboardStore } from './store/boards/leaderboard-store.js';
import { RateLimiter } from './store/workspaces/rate-limiter.js';
import { connectRedis, createRedis, createSubscriberConnection, type RedisClient } from './store/redis/redis.js';
import { preloadScripts } from './store/redis/scripts.js';
import { AdminOperations } from './admin/operations.js';
import { buildOpsApp } from './ops/app.js';
import { serviceReadiness } from './ops/health.js';
import { WorkspaceStore } from './store/workspaces/workspaces.js';
import { Gate } from './gate/gate.js';
import { BanStore } from './store/installation/bans.js';
import { AuditLogStore } from './store/installation/audit-log.js';
import { ErasureRequests } from './erasure/requests.js';
import { ErasureWorker } from './erasure/worker.js';
import { playerPlaces } from './erasure/places.js';

export interface RunningService {
  readonly server: Server;
  /** The operator's listener: health probes and, with ADMIN_TOKEN, the admin API. */
  readonly opsServer: Server;
  /** Base URL of the operator's listener (no trailing slash). */
  readonly opsUrl: string;
  /** Base URL of the public API, ending in /api/v1. */
  readonly baseUrl: string;
  readonly port: number;
  readonly redis: RedisClient;
  readonly authenticator: Authenticator;
  /** Platform-only access: its ban list and its counters (`gate.counters`). */
  readonly gate: Gate;
  /** Keys' last-use times waiting for the next batched write (flushed on close too). */
  readonly lastUsed: LastUsedRecorder;
  /** The plan limiter: its leases and the usage counts waiting for the next write. */
  readonly limiter: RateLimiter;
  /** This instance's erasure worker; absent without ERASURE_DIGEST_SECRET. */
  readonly erasureWorker: ErasureWorker | undefined;
  /** Players seen written, waiting for the next batched write to their workspaces' lists. */
  readonly playerIndex: PlayerIndexRecorder;
  /** The public API's answers counted for the console's overview, until the next flush. */
  readonly traffic: TrafficStats;
  /**
   * Turns /readyz to 503 (so load balancers take the instance out) while still serving
   * everything, for `ms`; resolves early when `skip` is called. Call close() after it.
   */
  drain(ms: number): { done: Promise<void>; skip(): void };
  /** Stops accepting, lets in-flight requests finish (up to the grace period), closes Redis. */
  close(): Promise<void>;
}

export function redisSettings(config: Config) {
  return {
    url: config.redisUrl ?? DEFAULT_REDIS_URL,
    clusterNodes: config.redisClusterNodes,
    commandTimeoutMs: config.redis.commandTimeoutMs,
    connectTimeoutMs: config.redis.connectTimeoutMs,
    autoPipelining: config.redis.autoPipelining,
  };
}

/** Idle keep-alive connections of the ops listener: probes and scrapes reconnect cheaply. */
const OPS_KEEP_ALIVE_MS = 5000;

/** Whether a listener bound to `host` takes connections on every interface. */
export function allInterfaces(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || /^[0:]+$/.test(host);
}

/**
 * X-Forwarded-For is believed only from a trusted proxy's socket (gate/client-address.ts), but
 * on every interface the port may still be reachable around the proxy: say so at start.
 */
function warnOfOpenProxyTrust(config: Config, logger: Logger): void {
  const { trustProxyHops, trustedProxyCidrs } = config.gate;
  if (!allInterfaces(config.host) || (trustProxyHops === 0 && trustedProxyCidrs.length === 0)) return;
  logger.warn(
    { host: config.host, trustProxyHops, trustedProxyCidrs },
    'the public listener is bound to all interfaces with proxy trust on: callers that reach the port without the proxy ' +
      'are judged by their own address, but bind HOST to the interface the proxy uses (or firewall the port) if it should only be reached through it',
  );
}

export interface ServiceOptions {
  /** The clock requests and admin operations read (Date.now); tests move it to cross intervals and periods. */
  readonly clock?: () => number;
}

export async function startService(config: Config, logger: Logger, options: ServiceOptions = {}): Promise<RunningService> {
  warnOfOpenProxyTrust(config, logger);
  const settings = redisSettings(config);
  const redis = createRedis(settings);
  // Large whole-player reads get a connection of their own: a 4 MiB reply on the shared one
  // held up every other workspace's commands (test-long/noisy-neighbour.test.ts).
  const bulk = createRedis(settings);
  try {
    await connectRedis(redis, Math.max(settings.connectTimeoutMs, 2000));
    await connectRedis(bulk, Math.max(settings.connectTimeoutMs, 2000)).catch((err: unknown) => {
      redis.disconnect();
      throw err;
    });
    await preloadScripts(redis);
  } catch (err) {
    throw new Error(`Cannot reach Redis at ${describeRedis(config)}: ${(err as Error).message}`, { cause: err });
  }
  instrumentRedis(redis, metrics);
  await warnOfFullCoverage(redis, logger);
  if (cluster.isWorker && cluster.worker) metrics.labelWorker(String(cluster.worker.id));
  metrics.enableDefaultMetrics();
  // A connection's errors while Redis restarts or fails over are counted and logged a line a second at most.
  const failoverLog = failoverLogOf(logger);
  const connectionError = (connection: string) => (err: Error) => {
    if (!failoverLog.note(err, { connection }, 'connection error')) logger.warn({ err: err.message, connection }, 'redis connection error');
  };
  redis.on('error', connectionError('main'));
  bulk.on('error', connectionError('bulk'));
  // Made once the main client is up, so that on a cluster it starts on a node known to be alive.
  const subscriberConnection = createSubscriberConnection(settings, redis);
  subscriberConnection.on('error', connectionError('subscriber'));

  const events = new EventSubscriber(subscriberConnection, logger);
  await events.start();

  const workspaces = new WorkspaceStore(redis);
  const authenticator = new Authenticator(new ApiKeyStore(redis), workspaces, events, {
    ...config.keyCache,
    failuresPerMinute: config.authFailuresPerMinute,
  });
  const gate = new Gate({ config: config.gate, logger, authenticator, store: new BanStore(redis), events });
  try {
    await gate.start();
  } catch (err) {
    await events.stop();
    redis.disconnect();
    bulk.disconnect();
    throw new Error(`Cannot load the ban list from Redis: ${(err as Error).message}`, { cause: err });
  }
  const lastUsed = new LastUsedRecorder(new KeyUsageStore(redis), logger);
  lastUsed.start(config.keyLastUsedFlushMs);
  const limiter = new RateLimiter(redis, config.rateLimit);
  limiter.start();
  // Tracked only once startup can no longer fail, so a failed start leaves nothing registered.
  const untrackKeyCache = metrics.trackKeyCache(authenticator);
  const untrackGate = metrics.trackGate(gate);
  const players = new PlayerDataStore(redis, playerLimitsOf(config), bulk);
  const quotaWarnings = new QuotaWarnings(redis, config.storage.quotaBytes, logger);
  const storage = new StorageUsage(redis, config.storage.refreshMs, { onTotals: (id, totals) => quotaWarnings.observe(id, totals) });
  storage.start(config.storage.flushMs);
  const quota = new StorageQuota(
    storage,
    config.storage.quotaBytes,
    { seconds: config.idempotencyTtlSeconds, overQuotaSeconds: config.idempotencyTtlOverQuotaSeconds },
    (id, plan) => quotaWarnings.notePlan(id, plan),
  );
  const historySweep = new HistorySweep(redis, storage, config, logger, options.clock);
  historySweep.start();
  const claims = new IdempotencyClaims(
    redis,
    config.idempotencyTtlSeconds,
    (workspaceId, bytes, expiresAtMs) => quota.recordKept(workspaceId, bytes, expiresAtMs),
    config.idempotencyClaimFailoverMs,
  );
  const playerIndex = new PlayerIndexRecorder(redis);
  playerIndex.start(config.playerIndexFlushMs);
  const registry = new BoardRegistry(redis, config.leaderboards.maxBoards);
  const boards = new LeaderboardStore(redis, registry, {
    maxEntries: config.leaderboards.maxEntries,
    idempotencyTtlSeconds: config.idempotencyTtlSeconds,
  });
  const follow = new FollowedWrites(redis, registry, boards, {
    events,
    logger,
    recordBoardBytes: (workspaceId, bytes) => storage.recordBoards(workspaceId, bytes),
    commandTimeoutMs: config.redis.commandTimeoutMs,
  });
  follow.start();
  const writes = new PlayerWrites(players, claims, config.limits, quota, config.redis.commandTimeoutMs, playerIndex, follow);
  const boardWrites = new BoardWrites(boards, claims, quota, storage);
  const messages = new PlayerMessages(new PlayerMessagesStore(redis, config.idempotencyTtlSeconds), claims, quota, config.messages);
  const erasureWorker = erasureWorkerOf(config, logger, redis, boards);
  const erasureRequests = new ErasureRequests(redis, config.erasure, new AuditLogStore(redis, config.auditMaxEntries), Date.now, (source) => {
    metrics.erasuresRequested.inc({ source });
    erasureWorker?.wake();
  });
  const traffic = new TrafficStats(redis, { gateMode: config.gate.mode }, config.statsFlushMs, options.clock);
  traffic.start();
  const app = buildApp({
    config,
    logger,
    authenticator,
    limiter,
    players,
    playerPages: new PlayerPages(redis),
    writes,
    boards,
    boardWrites,
    messages,
    workspaces,
    gate,
    lastUsed,
    clock: options.clock,
    erasures: erasureRequests,
    traffic,
  });

  let shuttingDown = false;
  const readiness = serviceReadiness(redis, () => shuttingDown);
  const ops = AdminOperations.forInstallation(redis, config, 'admin-api', options.clock);
  const opsApp = buildOpsApp({ config, logger, readiness, ops });

  // A request that trickles in is cut off rather than holding a socket for ever. Node checks
  // these timeouts every connectionsCheckingInterval (30 s by default): check more often.
  const server = createServer(
    {
      requestTimeout: config.http.requestTimeoutMs,
      headersTimeout: config.http.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
      // Node would answer a request without Host with a bare 400 of its own; the API has no use
      // for Host, so such a request is served (or refused) like any other, in the envelope.
      requireHostHeader: false,
    },
    app.callback(),
  );
  server.keepAliveTimeout = 65_000;
  closeSilentConnections(server, config.http.headersTimeoutMs);
  answerClientErrors(server);
  // The ops listener gets the same header, request and silent-connection timeouts: it may be
  // reachable from more than the host (ADMIN_HOST), and a socket held open costs the same there.
  const opsServer = createServer(
    {
      requestTimeout: config.http.requestTimeoutMs,
      headersTimeout: config.http.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.http.headersTimeoutMs),
    },
    opsApp.callback(),
  );
  opsServer.keepAliveTimeout = OPS_KEEP_ALIVE_MS;
  closeSilentConnections(opsServer, config.http.headersTimeoutMs);
  answerClientErrors(opsServer);
  await listen(server, config.port, config.host);
  await listen(opsServer, config.admin.port, config.admin.host);
  const port = (server.address() as AddressInfo).port;
  erasureWorker?.start();
  const opsPort = (opsServer.address() as AddressInfo).port;

  const drain = (ms: number) => {
    shuttingDown = true;
    let skip = () => {};
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      skip = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    return { done, skip };
  };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      shuttingDown = true;
      opsServer.close();
      opsServer.closeAllConnections();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
      await closed;
      clearTimeout(grace);
      await gate.stop();
      await erasureWorker?.stop();
      await follow.stop();
      await historySweep.stop();
      // After the last request, so the final uses are in the last batch.
      await lastUsed.stop();
      untrackKeyCache();
      untrackGate();
      await events.stop();
      await limiter.stop().catch((err: unknown) => logger.warn({ err }, 'could not write the last usage counts'));
      await storage.stop().catch((err: unknown) => logger.warn({ err }, 'could not write the last storage counts'));
      await traffic.stop().catch((err: unknown) => logger.warn({ err }, 'could not write the last traffic counts'));
      await playerIndex.stop().catch((err: unknown) => logger.warn({ err }, 'could not write the last players list entries'));
      await bulk.quit().catch(() => bulk.disconnect());
      await redis.quit().catch(() => redis.disconnect());
    })();
    return closing;
  };

  return {
    server,
    opsServer,
    baseUrl: `http://${loopbackIfAny(config.host)}:${port}/api/v1`,
    opsUrl: `http://${loopbackIfAny(config.admin.host)}:${opsPort}`,
    port,
    redis,
    authenticator,
    gate,
    lastUsed,
    limiter,
    erasureWorker,
    playerIndex,
    traffic,
    drain,
    close,
  };
}

/** Every instance with the digest secret works on erasure jobs; without it there are none it could run. */
function erasureWorkerOf(config: Config, logger: Logger, redis: RedisClient, boards: LeaderboardStore): ErasureWorker | undefined {
  const secret = config.erasure.digestSecret;
  if (secret === undefined) return undefined;
  const worker = new ErasureWorker({
    redis,
    config: config.erasure,
    secret,
    logger,
    places: playerPlaces(redis, boards),
    audit: new AuditLogStore(redis, config.auditMaxEntries),
    observer: {
      done: () => metrics.erasuresDone.inc(),
      failed: () => metrics.erasureAttemptsFailed.inc(),
      counts: (counts) => {
        for (const state of ['pending', 'failed', 'unmapped'] as const) metrics.erasureJobs.set({ state }, counts[state]);
      },
    },
  });
  return worker;
}

function loopbackIfAny(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The Redis address for messages, without any password in the URL. */
export function describeRedis(config: Config): string {
  if (config.redisClusterNodes) {
    return `the Redis Cluster at ${config.redisClusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  }
  const url = new URL(config.redisUrl ?? DEFAULT_REDIS_URL);
  url.password = '';
  url.username = '';
  return url.toString();
}
