// Cache invalidation across instances over Redis pub/sub. Writers publish after they change a
// key, workspace or ban; every instance's subscriber drops what it cached. While the
// subscription is down, `live` is false and callers must not trust their caches.
import { EventEmitter } from 'node:events';
import type { Logger } from '../../logger.js';
import { keys } from '../keys.js';
import type { RedisClient } from './redis.js';
import { failoverLogOf } from './failover-log.js';

/**
 * `created`: the key or workspace is new, so nothing cached of it can be stale but a "no such
 * key" (src/auth/authenticator.ts). Instances of a release before it ignore the field and drop
 * the entry, as they always did.
 */
export type CacheEvent =
  | { readonly type: 'key'; readonly keyHash: string; readonly created?: true }
  | { readonly type: 'workspace'; readonly workspaceId: string; readonly created?: true }
  | { readonly type: 'ban'; readonly address?: string };

export async function publishEvent(redis: RedisClient, event: CacheEvent): Promise<void> {
  await redis.publish(keys.eventsChannel(), JSON.stringify(event));
}

function parseEvent(message: string): CacheEvent | undefined {
  try {
    const event = JSON.parse(message) as Partial<CacheEvent> | null;
    if (event && (event.type === 'key' || event.type === 'workspace' || event.type === 'ban')) {
      return event as CacheEvent;
    }
  } catch {
    // ignored below
  }
  return undefined;
}

export interface EventSubscriberEvents {
  event: [CacheEvent];
  /** The subscription went down or came back: caches must be dropped either way. */
  reset: [];
}

export class EventSubscriber extends EventEmitter<EventSubscriberEvents> {
  private subscribed = false;

  constructor(
    private readonly connection: RedisClient,
    private readonly logger: Logger,
  ) {
    super();
    connection.on('message', (channel: string, message: string) => {
      if (channel !== keys.eventsChannel()) return;
      const event = parseEvent(message);
      if (event) this.emit('event', event);
      else this.logger.warn({ channel }, 'ignored a malformed cache event');
    });
    // On any loss of the connection the subscription is gone until it is made again.
    const down = () => {
      if (this.subscribed) {
        this.subscribed = false;
        this.emit('reset');
      }
    };
    connection.on('close', down);
    connection.on('end', down);
    connection.on('error', down);
    connection.on('ready', () => {
      void this.subscribe();
    });
  }

  /** True while invalidations are being received. */
  get live(): boolean {
    return this.subscribed;
  }

  async start(): Promise<void> {
    if (this.connection.status === 'wait') await this.connection.connect();
    await this.subscribe();
  }

  private async subscribe(): Promise<void> {
    try {
      await this.connection.subscribe(keys.eventsChannel());
      if (!this.subscribed) {
        this.subscribed = true;
        // Anything may have changed while we were not listening.
        this.emit('reset');
      }
    } catch (err) {
      if (!failoverLogOf(this.logger).note(err, {}, 'cache event subscription failed; caches are bypassed until it works')) {
        this.logger.warn({ err }, 'cache event subscription failed; caches are bypassed until it works');
      }
    }
  }

  async stop(): Promise<void> {
    this.subscribed = false;
    this.connection.disconnect();
  }
}
