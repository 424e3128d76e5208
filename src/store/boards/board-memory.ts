// What one leaderboard entry costs Redis, counted into its workspace's storage total for each
// entry a board's script adds or removes (store/workspaces/storage-usage.ts).
//
// An entry is a sorted-set member (8-character sequence code + user id) with its score, and a
// member-hash field (user id -> code). Measured by `npm run bench` (bench/lib/boards.ts): the
// used_memory delta of one period filled with 1,000,000 players of 2-7 character ids, 196 bytes
// an entry on Redis 7.0 (a bare ZADD of the same entries: 109). Boards of up to 128 entries
// are kept packed by Redis and cost less: the larger figure is counted for every entry.
export const BOARD_ENTRY_BYTES = 196;
