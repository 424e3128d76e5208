// Every Redis key name the service uses is built here, and nowhere else.
//
// Hash tags ({...}) decide the Redis Cluster slot:
// - a player's data hash is tagged by workspace and player, so players spread over the cluster;
// - a workspace's own keys (metadata, key list, rate-limit window, usage) share the tag {ws},
//   so a cluster keeps all of a workspace's own records on one node (and any script may
//   touch several of them).
// - API key records are single keys looked up by the SHA-256 of the key; they need no tag.
// Workspace ids and user ids never contain braces (both are validated), so the tags hold.

const PREFIX = 'pds:';

export const keys = {
  /**
   * Hash of one player's data: field = data key, value = `[updated_at_ms,<JSON value>]`, plus
   * the player's meta (version, counts, session) under fields that start with a NUL byte
   * (lua/write-player.lua describes them).
   */
  player: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}`,
  /** List of what the player's writes replaced, newest first (lua/write-player.lua). Same slot. */
  playerHistory: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:h`,
  /**
   * String: the first answer of a write to this player under one idempotency key, by the
   * SHA-256 of the key (the raw key may hold any printable character). Same slot as the player,
   * so the answer is kept in the same atomic step as the write.
   */
  playerIdempotency: (workspaceId: string, userId: string, keyHash: string) =>
    `${PREFIX}p:{${workspaceId}:${userId}}:i:${keyHash}`,
  /** SCAN pattern matching every key of every player of a workspace (data, history, idempotency). */
  playerPattern: (workspaceId: string) => `${PREFIX}p:{${workspaceId}:*`,
  /** Whether a key found by playerPattern is a player's data hash (not its history or kept answers). */
  isPlayerHash: (key: string) => key.endsWith('}'),
  /** SCAN pattern matching the players' data hashes only. */
  playerHashPattern: (workspaceId: string) => `${PREFIX}p:{${workspaceId}:*}`,
  /** Length of the player key prefix, to recover the user id from a key found by SCAN. */
  playerKeyUserId: (workspaceId: string, key: string) =>
    key.slice(`${PREFIX}p:{${workspaceId}:`.length, -1),

  /** Hash: id, name, plan, createdAt. */
  workspace: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}`,
  /** Set of the workspace's API key ids. */
  workspaceKeys: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:keys`,
  /** Fixed-window request counter of the workspace; its TTL is the window. */
  rateLimit: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:rl`,
  /** Hash of one UTC day's usage counters (`requests`, `limited`). day = YYYYMMDD. */
  usage: (workspaceId: string, day: string) => `${PREFIX}ws:{${workspaceId}}:use:${day}`,
  /**
   * String: the fingerprint of the request that first used an idempotency key in the workspace
   * (by the key's SHA-256), so that the key reused for another request, even for another player,
   * is refused. The answers themselves are kept with the players (playerIdempotency).
   */
  idempotencyClaim: (workspaceId: string, keyHash: string) => `${PREFIX}ws:{${workspaceId}}:idem:${keyHash}`,
  /**
   * Hash: `bytes` and `players` the workspace stores (data and history), summed from the player
   * scripts' deltas by every instance (store/workspaces/storage-usage.ts); not updated in the player's slot.
   */
  workspaceStorage: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:storage`,
  /**
   * Hash: board name -> the board's config as JSON (`periods`, `follow`, `createdAt`): the
   * workspace's registry of leaderboards, in the workspace's own slot so that the count of
   * boards (LEADERBOARD_MAX_BOARDS) is checked and changed in one step (lua/board-register.lua).
   */
  boardRegistry: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:boards`,
  /** Hash: key id -> last time (ms since the epoch) the key authenticated a request. */
  keyLastUsed: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:lastused`,
  /** SCAN pattern matching every key of the workspace's own slot (metadata, limits, usage). */
  workspacePattern: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}*`,
  /** Set of every workspace id (for listing). */
  workspaceIndex: () => `${PREFIX}workspaces`,

  // --- Leaderboards (docs/leaderboards.md) ---
  // Every key of one board shares the tag {<workspaceId>:<board>}: boards spread over a cluster,
  // and each board's script (lua/board-*.lua) touches one slot: its periods' sorted sets and
  // member hashes, its meta and its kept answers. Board names never hold braces or colons.

  /**
   * Hash: the board's meta, read and written by its scripts in the board's own slot: `p` the
   * periods it keeps (a copy of the registry's, checked by every write), `s` the last sequence
   * number (the tie-break), `n` the entries counted into the workspace's storage total.
   */
  boardMeta: (workspaceId: string, board: string) => `${PREFIX}lb:{${workspaceId}:${board}}`,
  /**
   * Sorted set of one period of a board: score = the player's score, member = an 8-character
   * sequence code, then the user id (domain/leaderboard.ts). `periodId` is `all`, or a
   * day/week/month id (domain/periods.ts), whose keys expire by themselves after the next period.
   */
  boardScores: (workspaceId: string, board: string, periodId: string) => `${PREFIX}lb:{${workspaceId}:${board}}:${periodId}`,
  /** Hash of one period of a board: user id -> the sequence code of the player's member. Same TTL. */
  boardMembers: (workspaceId: string, board: string, periodId: string) => `${PREFIX}lb:{${workspaceId}:${board}}:${periodId}:u`,
  /** String: the first answer of a write to the board under one idempotency key (by its SHA-256). */
  boardIdempotency: (workspaceId: string, board: string, keyHash: string) => `${PREFIX}lb:{${workspaceId}:${board}}:i:${keyHash}`,
  /** Hash: user id -> the player's version last applied to a board that follows a player key. */
  boardFollowed: (workspaceId: string, board: string) => `${PREFIX}lb:{${workspaceId}:${board}}:f`,
  /** SCAN pattern matching every key of every board of a workspace. */
  boardPattern: (workspaceId: string) => `${PREFIX}lb:{${workspaceId}:*`,

  /** Hash describing one API key, found by the SHA-256 (hex) of the raw key. */
  apiKey: (keyHash: string) => `${PREFIX}key:${keyHash}`,
  /** String: key id -> SHA-256 hex of the key, to manage a key by its id. */
  apiKeyId: (keyId: string) => `${PREFIX}kid:${keyId}`,

  /**
   * Hash: ban subject (an IPv4 address, or an IPv6 `network/64`; domain/address.ts banSubject) ->
   * JSON ban record. Lifted only by an operator.
   */
  bans: () => `${PREFIX}bans`,
  /** Hash: allow-listed address or range (`network/bits`) -> JSON entry. Never banned. */
  banAllow: () => `${PREFIX}ban-allow`,
  /**
   * Counter of automatic bans made in one minute (`minute` = epoch ms / 60000), on every
   * instance together; expires after two minutes.
   */
  banRate: (minute: number) => `${PREFIX}ban-rate:${minute}`,
  /** List of recent gate violations, newest first, capped. */
  violations: () => `${PREFIX}violations`,
  /** List of audit entries (JSON), newest first, trimmed to a bounded length. */
  auditLog: () => `${PREFIX}audit`,

  /** Hash of one operator console session (csrf, createdAt, address), by the SHA-256 of its id; TTL = idle time. */
  consoleSession: (idHash: string) => `${PREFIX}console:s:${idHash}`,
  /** Wrong admin tokens given to the console's sign-in from one address; TTL = the window. */
  consoleSignInFailures: (address: string) => `${PREFIX}console:fail:${address}`,

  /** Pub/sub channel that tells every instance to drop cached keys, workspaces and bans. */
  eventsChannel: () => `${PREFIX}events`,
} as const;
