// Creates the Redis client the service uses: a single server or a cluster, with bounded
// command timeouts and no offline queue, so a Redis that is down or slow turns into a quick
// 503 rather than requests piling up in memory. Reconnection is automatic and endless.
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../../config.js';
import { outcomeUnknown } from '../../errors.js';
import { defineScripts } from './scripts.js';
import { batchWritesPerTurn } from './write-batching.js';

export type RedisClient = Redis | Cluster;

export interface RedisSettings {
  readonly url?: string | undefined;
  readonly clusterNodes?: readonly { host: string; port: number }[] | undefined;
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Commands issued in the same turn leave in one write (write-batching.ts; ioredis's on a cluster). */
  readonly autoPipelining?: boolean;
}

function baseOptions(settings: RedisSettings): RedisOptions {
  return {
    commandTimeout: settings.commandTimeoutMs,
    connectTimeout: settings.connectTimeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Reconnect for ever, backing off to at most one attempt every 500 ms.
    retryStrategy: (attempt) => Math.min(50 * attempt, 500),
    lazyConnect: true,
  };
}

export function createRedis(settings: RedisSettings): RedisClient {
  const options = baseOptions(settings);
  let client: RedisClient;
  if (settings.clusterNodes && settings.clusterNodes.length > 0) {
    const cluster = new Cluster([...settings.clusterNodes], {
      enableOfflineQueue: false,
      // ioredis's auto-pipelining stays off here too (write-batching.ts per node instead): it
      // groups a turn's commands by the node list of their slots, and when the slot table is
      // refreshed between a command's queueing and the batch's exec (a replica that joined, a
      // failover) it fails the whole batch unsent ("same slots allocation group") or hands a
      // raw MOVED reply back; single commands follow MOVED and ASK themselves.
      enableAutoPipelining: false,
      lazyConnect: true,
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      // While a master is down (until its replica is promoted, about node-timeout + 1 s), each
      // command is retried every 100 ms with a fresh slot map. 8 tries bound that wait to
      // about a second, so callers get a quick 503 rather than hanging; once the replica has
      // taken over, the next refresh finds it and writes resume. (The default is 16.)
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      maxRedirections: 8,
      redisOptions: options,
    });
    // Each node's connection, once the cluster client has made it, sends a turn's commands in one write.
    if (settings.autoPipelining ?? true) cluster.on('+node', (node: Redis) => batchWritesPerTurn(node));
    client = cluster;
  } else {
    // ioredis's auto-pipelining stays off: write-batching.ts does its job for less.
    const redis = new Redis(settings.url ?? DEFAULT_REDIS_URL, { ...options, enableAutoPipelining: false });
    if (settings.autoPipelining ?? true) batchWritesPerTurn(redis);
    client = redis;
  }
  defineScripts(client);
  return client;
}

/**
 * The connection that carries the cache-invalidation subscription (store/redis/events.ts).
 *
 * On a single server it is a plain client like the others. On a cluster it is a plain client
 * to one node too, not the cluster client's own subscriber: PUBLISH reaches every node of a
 * cluster, so any node will do, and a plain client tells us when it loses the subscription
 * ('close'), which the cluster client's internal subscriber does not. When its node goes away
 * it moves on to the next node the cluster client knows of, so a failed-over master does not
 * leave the caches bypassed for ever.
 */
export function createSubscriberConnection(settings: RedisSettings, main: RedisClient): Redis {
  // (Call it once `main` is connected: on a cluster it starts on a node `main` knows.)
  const seeds = settings.clusterNodes;
  if (!seeds || seeds.length === 0 || !(main instanceof Cluster)) {
    return createRedis({ ...settings, autoPipelining: false }) as Redis;
  }
  const candidates = () => {
    const known = main.nodes('all').map((node) => ({ host: node.options.host!, port: node.options.port! }));
    return known.length > 0 ? known : [...seeds];
  };
  const options = baseOptions(settings);
  const first = candidates()[0]!;
  const connection: Redis = new Redis({
    ...options,
    host: first.host,
    port: first.port,
    retryStrategy: (attempt) => {
      const list = candidates();
      const next = list[attempt % list.length]!;
      // ioredis reads host and port from these options on every reconnection.
      connection.options.host = next.host;
      connection.options.port = next.port;
      return Math.min(50 * attempt, 500);
    },
  });
  return connection;
}

/**
 * The node (`host:port` of its master) that serves `key` now, as the cluster client routes it;
 * '' on a single server, or while the client has no slot table. For work bounded per Redis
 * thread (saves/player-turns.ts: a workspace's writes one at a time on each node), so that a
 * node that fails does not hold up the workspace's writes to the others.
 *
 * It reads the cluster client's slot table (`slots`: the node keys of each slot, the master
 * first), which ioredis keeps for its own routing and does not publish;
 * test/cluster/redis-client.test.ts checks it against CLUSTER SLOTS.
 */
export function nodeOf(client: RedisClient, key: string): string {
  if (!(client instanceof Cluster)) return '';
  const table = (client as unknown as { slots?: ReadonlyArray<readonly string[] | undefined> }).slots;
  return table?.[calculateSlot(key)]?.[0] ?? '';
}

/** Connects, and rejects with a clear message when Redis does not answer in time. */
export async function connectRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), timeout]);
    await Promise.race([client.ping(), timeout]);
  } catch (err) {
    client.disconnect();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

// MOVED and ASK reach us only when a slot moved while an auto-pipelined batch was in flight
// (ioredis follows them for single commands): the command was not run, so the caller may retry.
const UNAVAILABLE_REPLY = /^(LOADING|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|BUSY|NOREPLICAS|MOVED|ASK)\b/;

/**
 * Whether a command that failed with `err` may have run in Redis all the same: it timed out
 * (Redis may still run it when it gets to it), or the connection dropped while it was on its
 * way or waiting for its answer (`sentOnReadyConnection`: the client was connected when it was
 * sent, so it left). A refusal by Redis (a reply error) or a client that was not connected
 * means it never ran.
 */
export function mayHaveRun(err: unknown, sentOnReadyConnection: boolean): boolean {
  if (!(err instanceof Error) || err.name === 'ReplyError') return false;
  if (/Command timed out/.test(err.message)) return true;
  return sentOnReadyConnection && /Connection is closed|ECONNRESET|EPIPE|ETIMEDOUT/.test(err.message);
}

/**
 * Runs a command that changes data (a write script): a failure after it may have run in Redis
 * (mayHaveRun) is OUTCOME_UNKNOWN, never the "nothing was written" of STORAGE_UNAVAILABLE.
 */
export async function changing<T>(client: RedisClient, command: () => Promise<T>): Promise<T> {
  const ready = client.status === 'ready';
  try {
    return await command();
  } catch (err) {
    throw mayHaveRun(err, ready) ? outcomeUnknown(err) : err;
  }
}

/**
 * Whether an error from ioredis means "Redis cannot serve right now" (503, worth a retry)
 * rather than a bug (500): connection loss, timeouts, a loading, busy or failing-over node, and
 * ioredis's auto-pipelining on a cluster refusing a batch whose slots' node lists changed under
 * it ("same slots allocation group", thrown by Pipeline.exec before anything is sent; the
 * service's cluster client no longer auto-pipelines, createRedis, but a client made with it on
 * still answers 503 rather than 500).
 */
export function isUnavailableError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'ReplyError') return UNAVAILABLE_REPLY.test(err.message);
  return (
    err.name === 'MaxRetriesPerRequestError' ||
    /Command timed out|Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|enableOfflineQueue|Too many Cluster redirections|same slots allocation group/i.test(
      err.message,
    )
  );
}
