// What one leaderboard entry costs Redis, counted into its workspace's storage total for each
// entry a board's script adds or removes (store/workspaces/storage-usage.ts).
//
// An entry is a sorted-set member (8-character sequence code + user id) with its score, and a
// member-hash field (user id -> code). Measured by bench/board-memory.ts: used_memory before and
// after filling one period with 1,000,000 players of 7-digit ids, through lua/board-write.lua,
// on Redis 7.0 (MEASURED in docs/leaderboards.md).
export const BOARD_ENTRY_BYTES = 150;
