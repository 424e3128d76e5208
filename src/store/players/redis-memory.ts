// What a player's data costs in Redis memory, from the bytes the service counts (`\0b`: key
// names and stored entries) and the players with data. Measured with MEMORY USAGE of the
// player's hash (docs/safe-saves.md, "Size limits"): the counted bytes alone are 0.2x (a
// one-key player: the hash's own key, object and meta fields weigh ~135 B) to 0.97x (large
// values) of it; 1.2 x the counted bytes + 150 B a player is within ±20% for players of 1 to
// 1000 keys and values of 10 B to 500 KB, except many tiny values in a hash Redis has turned
// into a hashtable (1000 keys of 10 B: 0.5x, ~45 B of dictEntry and SDS headers a field).
// test/store/players/redis-memory.test.ts holds it on a sample.

/** Redis bytes per counted byte of data: jemalloc's size classes, listpack and SDS headers. */
export const REDIS_BYTES_PER_DATA_BYTE = 1.2;
/** Redis bytes per player with data: the hash's key, its object, its meta fields (`\0v`, `\0n`, `\0b`, ...). */
export const REDIS_BYTES_PER_PLAYER = 150;

/** The Redis memory that `dataBytes` of data over `players` players take, estimated. */
export function estimatedRedisBytes(dataBytes: number, players: number): number {
  return Math.round(dataBytes * REDIS_BYTES_PER_DATA_BYTE + players * REDIS_BYTES_PER_PLAYER);
}
