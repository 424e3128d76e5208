// Every Redis key name the service uses is built here, and nowhere else.
//
// Hash tags ({...}) decide the Redis Cluster slot:
// - a player's data hash is tagged by workspace and player, so players spread over the cluster;
// - a workspace's own keys (metadata, key list, rate-limit window, usage) share the tag {ws},
//   so a cluster keeps all of a workspace's own records on one node (and any script may
//   touch several of them).
// - a workspace's idempotency claims are tagged by the workspace and the start of the key's
//   hash ({ws:ab}), so one busy workspace's writes spread over every master;
// - API key records are single keys looked up by the SHA-256 of the key; they need no tag.
// - the records of erasures (jobs, tombstones, notifications seen) share the tag {erasure}: few
//   and small, they live on one node, so each step of a job (recorded, done, failed) is one
//   script over all of them.
// Workspace ids and user ids never contain braces, colons or glob characters (both are
// validated), so the tags hold and a tag can be matched with SCAN.

import calculateSlot from 'cluster-key-slot';

const PREFIX = 'pds:';
/** Shards of the followed writes in flight (keys.followPending). */
export const FOLLOW_PENDING_SHARDS = 16;
/**
 * Their hash tags: shard i's slot is in the i-th sixteenth of the slots (the first `fp:i:n`
 * there), so masters owning ranges of slots, as redis-cli --cluster create and rebalance lay
 * them out, each hold some shards up to 16 masters.
 */
const FOLLOW_PENDING_TAGS: readonly string[] = Array.from({ length: FOLLOW_PENDING_SHARDS }, (_, shard) => {
  const width = 16384 / FOLLOW_PENDING_SHARDS;
  for (let n = 0; ; n++) {
    const tag = `fp:${shard}:${n}`;
    if (Math.floor(calculateSlot(tag) / width) === shard) return tag;
  }
});
/** Characters of an idempotency key's hash (base64url) in its claim's tag: 64^2 = 4,096 tags a workspace. */
const CLAIM_SPREAD_CHARS = 2;

export const keys = {
  /**
   * Hash of one player's data: field = data key, value = `[updated_at_ms,<JSON value>]`, plus
   * the player's meta (version, counts, session) under fields that start with a NUL byte
   * (lua/write-player.lua describes them).
   */
  player: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}`,
  /**
   * List of the player's fine restore points, newest first (lua/includes/restore-points.lua);
   * also what writes before restore points replaced. Same slot.
   */
  playerHistory: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:h`,
  /** List of the player's coarse restore points (one an hour, past HISTORY_HOURLY_HOURS one a day), newest first. Same slot. */
  playerHistoryCoarse: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:hc`,
  /** Hash of the restore points' own meta: `x` the index of both lists, `k` the keys recorded in the open point when over 64 bytes (else the player hash's `\0k`). Same slot. */
  playerHistoryMeta: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:hm`,
  /**
   * Hash of the player's waiting messages: id -> `<sent ms>|<expires ms>|<JSON>`, `#` the last
   * sequence number (lua/send-message.lua). Same slot, so a save acknowledges them in its own step.
   */
  playerInbox: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:m`,
  /**
   * String: the first answer of a write to this player under one idempotency key, by the
   * SHA-256 of the key (the raw key may hold any printable character). Same slot as the player,
   * so the answer is kept in the same atomic step as the write.
   */
  playerIdempotency: (workspaceId: string, userId: string, keyHash: string) =>
    `${PREFIX}p:{${workspaceId}:${userId}}:i:${keyHash}`,
  /**
   * Sorted set: the records in other slots that keep an answer naming this player, `c:<key
   * hash>` a many-player request's whole answer in its idempotency claim, `b:<board>:<key hash>`
   * a leaderboard write's kept answer, scored by when each expires (ms); written before the
   * record (store/players/kept-elsewhere.ts). An erasure deletes the records it names. Same slot.
   */
  playerKeptElsewhere: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}:k`,
  /** SCAN pattern matching every key of every player of a workspace (data, history, idempotency). */
  playerPattern: (workspaceId: string) => `${PREFIX}p:{${workspaceId}:*`,
  /** Whether a key found by playerPattern is a player's data hash (not its history or kept answers). */
  isPlayerHash: (key: string) => key.endsWith('}'),
  /** SCAN pattern matching the players' data hashes only. */
  playerHashPattern: (workspaceId: string) => `${PREFIX}p:{${workspaceId}:*}`,
  /**
   * SCAN pattern of every key tagged with this player's tag: data, history, kept answers, and
   * whatever else a later release keeps in the player's slot. The `}` ends the tag, so player
   * 42 never matches player 421.
   */
  playerTagPattern: (workspaceId: string, userId: string) => `${PREFIX}p:{${workspaceId}:${userId}}*`,
  /** SCAN pattern of every key tagged with this user's tag in any workspace. */
  userTagPattern: (userId: string) => `${PREFIX}p:{*:${userId}}*`,
  /** The workspace of a key carrying a player's tag, or undefined for any other key. */
  playerTagWorkspace: (key: string): string | undefined => /^pds:p:\{([^:{}]+):[^{}]+\}/.exec(key)?.[1],
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
   * Tagged by the workspace and the first CLAIM_SPREAD_CHARS characters of the key's hash, not
   * by the workspace alone: a busy workspace's claims (one per idempotent write) spread over
   * 4,096 tags, so over every master, instead of pinning the workspace's own slot's master
   * (issue 40: 70 k commands on it against 48 k on each other). One key always lands on one
   * tag, so its reuse is still seen in one SET NX (docs/safe-saves.md).
   */
  idempotencyClaim: (workspaceId: string, keyHash: string) =>
    `${PREFIX}ws:{${workspaceId}:${keyHash.slice(0, CLAIM_SPREAD_CHARS)}}:idem:${keyHash}`,
  /** SCAN pattern matching every idempotency claim of a workspace, whatever its tag. */
  idempotencyClaimPattern: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}:*`,
  /**
   * String: a claim as releases before the spread kept it, in the workspace's own slot. None is
   * written any more; a many-player request reads it (saves/idempotency.ts) so that one retried
   * across the upgrade still finds its kept answer. Useless once IDEMPOTENCY_TTL_SECONDS have
   * passed since the upgrade: remove it a release later. Deleted with the workspace's own keys.
   */
  legacyIdempotencyClaim: (workspaceId: string, keyHash: string) => `${PREFIX}ws:{${workspaceId}}:idem:${keyHash}`,
  /**
   * String: when (ms) an instance of the release that spreads the claims first read a legacy
   * claim of the workspace (SET NX). Those claims are read for twice IDEMPOTENCY_TTL_SECONDS from
   * then (a claim's life, plus a rolling upgrade shorter than it), no longer after: each instance
   * reads this once per workspace. In the workspace's slot, where the legacy claims are; deleted
   * with the workspace's own keys. Remove with legacyIdempotencyClaim.
   */
  claimsSpreadSince: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:claims-spread-since`,
  /**
   * Hash: `bytes` and `players` the workspace stores (data and history), summed from the player
   * scripts' deltas by every instance (store/workspaces/storage-usage.ts); not updated in the player's slot.
   */
  workspaceStorage: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:storage`,
  /**
   * String: the last storage-quota warning level (`80`, `95`) logged for the workspace by any
   * instance, swapped with SET GET so each crossing is logged once across the fleet
   * (saves/quota-warnings.ts); deleted when the workspace falls back under 80%. Expires after a week.
   */
  workspaceQuotaLevel: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:quota-level`,
  /**
   * Hash: board name -> the board's config as JSON (`periods`, `follow`, `createdAt`): the
   * workspace's registry of leaderboards, in the workspace's own slot so that the count of
   * boards (LEADERBOARD_MAX_BOARDS) is checked and changed in one step (lua/board-register.lua).
   */
  boardRegistry: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:boards`,
  /**
   * String: the workspace's erasure player names as a JSON array of templates (`Player_{userId}`):
   * the players an erasure of a user id also erases in the workspace, besides the player of that
   * id (store/workspaces/erasure-names.ts, docs/erasure.md). In the workspace's own slot, so
   * deleting the workspace drops it with its other records.
   */
  erasurePlayerNames: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:erasure-players`,
  /** Hash: key id -> last time (ms since the epoch) the key authenticated a request. */
  keyLastUsed: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:lastused`,
  /**
   * Sorted set: user id -> when the player was last written (ms), for the console's players list
   * (store/workspaces/player-index.ts). Written in batches by each instance and at once by admin
   * writes; a player whose data is deleted entirely leaves it. In the workspace's slot, so one
   * batch is one script call that also checks the workspace still exists.
   */
  workspacePlayers: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:players`,
  /**
   * Sorted set: user id -> when the player was last written (ms), like workspacePlayers, but a
   * player leaves it only once its history has left Redis (saves/history-sweep.ts): a player
   * whose data was deleted still has restore points to age. Written with the players list.
   */
  workspaceHistory: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:hist`,
  /**
   * Hash: the history sweep's place in the workspace (`walk`: the last write time its rolling
   * walk reached; `shed`: the same for shedding). String `...:hist:lease` (PX): the instance
   * sweeping the workspace now, so that instances take turns rather than repeat each other.
   */
  historySweep: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:hist:sweep`,
  historySweepLease: (workspaceId: string) => `${PREFIX}ws:{${workspaceId}}:hist:lease`,
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
  /**
   * Sorted set, one of FOLLOW_PENDING_SHARDS: the writes in flight to keys boards follow
   * (boards/followed-writes.ts): member `[workspaceId, userId, nowMs, nonce]` as JSON, score =
   * when the intent was written (ms). Added before such a write, removed once its boards hold
   * the stored value; what a crash leaves is swept by any instance. In shards whose slots are
   * spread evenly over the 16,384 (FOLLOW_PENDING_TAGS), so that every master of a cluster
   * holds some and a master that fails over holds only its own: with one key, every followed
   * write of the installation failed while its master did.
   */
  followPending: (shard: number) => `${PREFIX}{${FOLLOW_PENDING_TAGS[shard]}}:pending`,
  /** The one key the release before kept every intent in: swept and erased, never written. */
  followPendingLegacy: () => `${PREFIX}{follow}:pending`,
  /** Every key intents may be in: the shards, then the legacy key. */
  followPendingAll: () => [...FOLLOW_PENDING_TAGS.map((_, shard) => keys.followPending(shard)), keys.followPendingLegacy()],
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
  /**
   * Counter of one network's automatic bans in one minute (`network`: an IPv4 /24 or an IPv6 /48,
   * domain/address.ts banNetwork), on every instance together; expires after two minutes.
   */
  banRateNetwork: (minute: number, network: string) => `${PREFIX}ban-rate:${minute}:${network}`,
  /** List of recent gate violations, newest first, capped. */
  violations: () => `${PREFIX}violations`,
  /** List of audit entries (JSON), newest first, trimmed to a bounded length. */
  auditLog: () => `${PREFIX}audit`,

  /** Hash of one operator console session (csrf, createdAt, address), by the SHA-256 of its id; TTL = idle time. */
  consoleSession: (idHash: string) => `${PREFIX}console:s:${idHash}`,
  /** Wrong admin tokens given to the console's sign-in from one address; TTL = the window. */
  consoleSignInFailures: (address: string) => `${PREFIX}console:fail:${address}`,
  /**
   * Wrong bearer tokens sent to the admin API from one address (an IPv6 address by its /64);
   * TTL = ADMIN_AUTH_WINDOW_SECONDS.
   */
  adminAuthFailures: (subject: string) => `${PREFIX}admin:fail:${subject}`,

  /** Hash: game id (the platform's universe id) -> the workspace that serves it (docs/erasure.md). */
  games: () => `${PREFIX}games`,
  /** Stream of the erasure jobs not yet done, read by every instance through one consumer group. */
  erasureStream: () => `${PREFIX}{erasure}:jobs`,
  /** Hash: one erasure job (state, progress; the user id only until it is done). */
  erasureJob: (jobId: string) => `${PREFIX}{erasure}:job:${jobId}`,
  /** Sorted set: job ids by the time they were requested (ms), for listing; pruned past the retention. */
  erasureIndex: () => `${PREFIX}{erasure}:index`,
  /** Sorted set: jobs waiting for a game to be mapped to a workspace, by request time. */
  erasureUnmapped: () => `${PREFIX}{erasure}:unmapped`,
  /** Hash: `requested`, `done` (ever), `pending`, `failed`, `unmapped` (now) of every job. */
  erasureStats: () => `${PREFIX}{erasure}:stats`,
  /** String: the job made for a webhook notification, by the SHA-256 of its NotificationId; TTL = tombstone retention. */
  erasureNotification: (idHash: string) => `${PREFIX}{erasure}:seen:${idHash}`,
  /** String: which worker runs the job now; TTL = ERASURE_CLAIM_IDLE_MS, renewed while it runs. */
  erasureLease: (jobId: string) => `${PREFIX}{erasure}:lease:${jobId}`,
  /** String: an erased player's tombstone, by the keyed digest of workspace and user; TTL = retention. */
  tombstone: (digest: string) => `${PREFIX}{erasure}:tomb:${digest}`,
  /**
   * String: the workspace has had players erased within the tombstone retention (TTL = that
   * retention, renewed by each erasure), so an import into it must check tombstones, and can
   * only with the installation's digest secret. An import into any other workspace needs none.
   */
  erasedIn: (workspaceId: string) => `${PREFIX}{erasure}:ws:${workspaceId}`,
  /** String: a digest of a fixed text under the installation's digest secret, to catch a process given another secret. */
  erasureKeyCheck: () => `${PREFIX}{erasure}:key-check`,
  /** String: set by an erasure while AOF rewrites are on; the next rewrite clears it. */
  erasureRewriteDue: () => `${PREFIX}{erasure}:rewrite-due`,
  /** String: held for ERASURE_AOF_REWRITE_HOURS after a rewrite started, so rewrites are spaced. */
  erasureRewriteWindow: () => `${PREFIX}{erasure}:rewrite-window`,
  /** List of the newest bans (JSON: address, bannedAt, source, reasons), newest first, capped: the overview's recent bans. */
  recentBans: () => `${PREFIX}bans:recent`,

  // The console's overview (store/installation/traffic-stats.ts). All in one slot ({stats}), so
  // an instance's flush is one MULTI and the overview's ZUNION of an hour's minutes is legal on
  // a cluster.
  /** Hash of one minute's public answers, every instance added up: requests, limited, errors, l<bucket>. Minute = ms of its start. Kept 2 h. */
  statsMinute: (minute: number) => `${PREFIX}{stats}:m:${minute}`,
  /** Sorted set of one minute's requests per workspace. Kept 2 h. */
  statsMinuteWorkspaces: (minute: number) => `${PREFIX}{stats}:w:${minute}`,
  /** Sorted set: instance id -> its last report (ms). */
  statsInstances: () => `${PREFIX}{stats}:instances`,
  /** Hash of one instance (host, pid, startedAt, gateMode); TTL three flush intervals. */
  statsInstance: (instanceId: string) => `${PREFIX}{stats}:instance:${instanceId}`,
  /** Sorted set: workspace id -> bytes it stores, as its total was last added up (storage-usage.ts). */
  statsStorage: () => `${PREFIX}{stats}:storage`,
  /** Sorted set: workspace id -> its share of its quota (used / quota) when it crossed 80%: the overview's workspaces near their quota. */
  statsQuotaWarnings: () => `${PREFIX}{stats}:quota`,

  /** Pub/sub channel that tells every instance to drop cached keys, workspaces and bans. */
  eventsChannel: () => `${PREFIX}events`,
} as const;
