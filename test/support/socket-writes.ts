// Counts the socket writes of an ioredis connection (a writev counts once): what
// src/store/redis/write-batching.ts changes, on a single server and on each cluster node.
import type { Redis } from 'ioredis';
import type { Socket } from 'node:net';

export function countWrites(client: Redis): { readonly count: number } {
  const socket = (client as unknown as { stream: Socket & { _write: Function; _writev: Function } }).stream;
  const counter = { count: 0 };
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...args: unknown[]) => {
      counter.count++;
      return original(...args);
    };
  }
  return counter;
}
