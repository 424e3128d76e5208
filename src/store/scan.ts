// Walks every key matching a pattern, on a single server or on every master of a cluster.
// A cluster client would send SCAN to one random node and see only its share of the keys, so
// operations that walk many keys (deleting a workspace, exports, usage reports) go through here.
import { Cluster, type Redis } from 'ioredis';
import type { RedisClient } from './redis.js';

export async function* scanKeys(client: RedisClient, pattern: string, count = 500): AsyncGenerator<string[]> {
  const nodes: Redis[] = client instanceof Cluster ? client.nodes('master') : [client];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', count);
      cursor = next;
      if (batch.length > 0) yield batch;
    } while (cursor !== '0');
  }
}
