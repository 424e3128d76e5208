// The in-process ban list against a real Redis: what it loads, how events keep it current,
// and that losing Redis never lifts a ban.
import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { BanList } from '../../src/gate/ban-list.js';
import { createLogger } from '../../src/logger.js';
import { BanStore } from '../../src/store/installation/bans.js';
import { EventSubscriber } from '../../src/store/redis/events.js';
import { createRedis } from '../../src/store/redis/redis.js';
import { parseIp } from '../../src/domain/address.js';
import { freshIPv4, waitFor } from '../support/gate.js';
import { testRedisUrl } from '../support/hooks.js';
import { testRedis } from '../support/service.js';

const logger = createLogger({ logLevel: 'silent', nodeEnv: 'test' });
const ban = (address: string) => ({ address, bannedAt: new Date().toISOString(), source: 'operator' as const, reasons: ['test'] });

describe('gate/ban-list', () => {
  let writer: Redis;
  let store: BanStore;
  before(() => {
    writer = testRedis();
    store = new BanStore(writer);
  });
  after(() => writer.disconnect());

  it('follows bans, lifts and allow-list changes through events, with no polling', async () => {
    const subscriber = createRedis({ url: testRedisUrl(), commandTimeoutMs: 1000, connectTimeoutMs: 1000, autoPipelining: false });
    const events = new EventSubscriber(subscriber, logger);
    await events.start();
    const list = new BanList(store, events, logger, 3_600_000);
    await list.start();
    try {
      const address = freshIPv4();
      await store.add(ban(address));
      expect(await waitFor(async () => list.isBanned(address), 2000)).to.equal(true);
      await store.remove([address]);
      expect(await waitFor(async () => !list.isBanned(address), 2000)).to.equal(true);
      const ip = parseIp(address)!;
      await store.allow({ entry: `${address}/32`, addedAt: new Date().toISOString() });
      expect(await waitFor(async () => list.isAllowListed(ip), 2000)).to.equal(true);
      await store.disallow(`${address}/32`);
      expect(await waitFor(async () => !list.isAllowListed(ip), 2000)).to.equal(true);
    } finally {
      list.stop();
      await events.stop();
    }
  });

  it('keeps applying the last list it loaded while Redis cannot be read', async () => {
    const address = freshIPv4();
    await store.add(ban(address));
    const reader = createRedis({ url: testRedisUrl(), commandTimeoutMs: 500, connectTimeoutMs: 500 });
    await reader.connect();
    const list = new BanList(new BanStore(reader), undefined, logger, 1000);
    await list.start();
    try {
      expect(list.isBanned(address)).to.equal(true);
      reader.disconnect();
      await list.reload();
      expect(list.isBanned(address)).to.equal(true);
    } finally {
      list.stop();
      reader.disconnect();
      await store.remove([address]);
    }
  });
});
