--[[
  One write to a leaderboard (set, increment or delete of one player's score), applied to every
  period the board keeps in one atomic step in the board's slot, with its answer kept under the
  request's idempotency key in the same step. Every check runs before the first write.

  A member of a period's sorted set is an 8-character sequence code, then the user id. The code
  is the board's sequence number of the write that last changed the player's score there,
  inverted (62^8 - 1 - n, base 62, fixed width): equal scores are ordered by member, so in the
  descending order the player who reached a score first comes first (docs/leaderboards.md).
  A write that leaves a score as it was keeps its member, so it keeps its place among ties.

  Input:
    KEYS[1] the board's meta hash: `p` periods kept (the registry's, e.g. 'all daily'), `s` the
            last sequence number, `n` entries counted into the workspace's storage total (made
            again from the sorted sets passed whenever a write adds or removes an entry)
    KEYS[2] the idempotency record of this request (used only when ARGV[7] is not '')
    KEYS[3] the board's followed versions (user id -> player version; used by ARGV[1] 'f', 'e')
    KEYS[4..] for each period of ARGV[4], in order: its sorted set and member hash; for daily,
            weekly and monthly then the previous period's sorted set and member hash
    ARGV[1] 's' set, 'i' increment, 'd' delete, 'e' erase (delete, and forget the followed
            version), 'f' follow: set to ARGV[3] (delete when ARGV[3] is '') when ARGV[8] is
            newer than the version last applied
    ARGV[2] user id
    ARGV[3] the score (s, f) or the amount (i), as decimal text; '' otherwise
    ARGV[4] the periods KEYS holds, space-separated. For s, i and f it must be what `p` says
            the board keeps; d and e take any periods (the caller passes every period)
    ARGV[5] for each period of ARGV[4]: ms its current keys live when created (0 for all)
    ARGV[6] `<most entries a period holds> <seconds an idempotency record is kept>`
    ARGV[7] fingerprint of the request for its idempotency key, or ''
    ARGV[8] the player's version for 'f', else ''

  Output:
    { 1, changed, entriesDelta, periods, score1, score2, ... }  s, i, f applied: changed 1
        when a score moved; entriesDelta the change of the board's entries counted into storage
        (every sorted set of KEYS); periods = ARGV[4]; the player's score in each of them, as
        decimal text
    { 1, deleted, entriesDelta }  d, e (and f of ''): deleted 1 when the player was on a period
    { 1, 0, 0 }                   f whose version is not newer than the one applied: ignored
    { 2, '<the first answer, as JSON>' }  replay of the idempotency key's first answer
    { -1 }            UNREGISTERED: the board has no `p` (not in the registry yet); not recorded
    { -2, periods }   PERIODS_CHANGED: the board keeps other periods than ARGV[4]; not recorded
    { -3, period }    BOARD_FULL: a new entry in that period past the most entries
    { -4, period }    NUMBER_OUT_OF_RANGE: the increment's result there is not a finite number
    { -8 }            IDEMPOTENCY_KEY_REUSED (the players' code, as the shared prologue returns it); not recorded
  Nothing is written for a negative answer; -3 and -4 are recorded under the idempotency key.
]]
local META, I, F = KEYS[1], KEYS[2], KEYS[3]
local op, userId, arg, spec = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local maxEntries, idemTtl = string.match(ARGV[6], '^(%d+) (%d+)$')
maxEntries = tonumber(maxEntries)
local idemFp = ARGV[7]

--- @include "includes/idempotency.lua"

-- The code below keeps to plain loops and functions of their arguments: every closure over the
-- script's locals, table and string made in a call is work for Redis's Lua and its collector.
-- Counted by `BENCH_CALLGRIND=1 npm run bench:board-script` (Redis's instructions an increment):
-- the seven commands alone 136,000, the script written with helper closures 183,000, this 162,000.

-- The periods of ARGV[4], in order, each { name, sorted set, member hash, ttl ms } and for a
-- rolling period its previous pair (pz, pu). All-time alone, the usual board, needs no parsing.
local sets
if spec == 'all' then
  sets = { { name = 'all', z = KEYS[4], u = KEYS[5], ttl = 0 } }
else
  sets = {}
  local k, from = 4, 1
  for name in string.gmatch(spec, '%S+') do
    local ttlEnd = string.find(ARGV[5], ' ', from, true)
    local s = { name = name, z = KEYS[k], u = KEYS[k + 1], ttl = tonumber(string.sub(ARGV[5], from, (ttlEnd or 0) - 1)) }
    from = (ttlEnd or #ARGV[5]) + 1
    k = k + 2
    if name ~= 'all' then
      s.pz, s.pu = KEYS[k], KEYS[k + 1]
      k = k + 2
    end
    sets[#sets + 1] = s
  end
end

local meta = redis.call('HMGET', META, 'p', 's', 'n')
local kept, sequence, counted = meta[1], tonumber(meta[2] or '0'), tonumber(meta[3] or '0')

-- The board's meta after a write: its sequence number, and, when the write added or removed an
-- entry, the entries of every sorted set passed against what the workspace's total counts for
-- the board. A period that expired since is taken off there: a write to a rolling period after
-- its boundary always adds an entry (to the new period's set). Returns the change of the count.
local function settle(meta, sets, counted, entriesChanged, newSequence)
  local delta = 0
  if entriesChanged then
    local live = 0
    for _, s in ipairs(sets) do
      live = live + redis.call('ZCARD', s.z)
      if s.pz then live = live + redis.call('ZCARD', s.pz) end
    end
    delta = live - counted
    if delta ~= 0 then
      if newSequence then redis.call('HSET', meta, 'n', live, 's', newSequence) else redis.call('HSET', meta, 'n', live) end
      return delta
    end
  end
  if newSequence then redis.call('HSET', meta, 's', newSequence) end
  return delta
end

-- Takes the player off every period passed (its member found by its code); 1 when it was on one.
local function remove(sets, userId)
  local deleted = 0
  for _, s in ipairs(sets) do
    local z, u = s.z, s.u
    for _ = 1, s.pz and 2 or 1 do
      local code = redis.call('HGET', u, userId)
      if code then
        if redis.call('ZREM', z, code .. userId) == 1 then deleted = 1 end
        redis.call('HDEL', u, userId)
      end
      z, u = s.pz, s.pu
    end
  end
  return deleted
end

if op == 'd' or op == 'e' then
  local deleted = remove(sets, userId)
  if op == 'e' then redis.call('HDEL', F, userId) end
  -- A board not registered has no meta to keep (and no entries, but those of a racing deletion).
  if not kept then return answer({ 1, deleted, 0 }) end
  return answer({ 1, deleted, settle(META, sets, counted, deleted == 1) })
end

if not kept then return { -1 } end
if kept ~= spec then return { -2, kept } end

if op == 'f' then
  local last = redis.call('HGET', F, userId)
  if last and tonumber(last) >= tonumber(ARGV[8]) then return { 1, 0, 0 } end
  if arg == '' then
    redis.call('HSET', F, userId, ARGV[8])
    local deleted = remove(sets, userId)
    return { 1, deleted, settle(META, sets, counted, deleted == 1) }
  end
end

-- First pass: each period's current and new score, and every refusal, before any write. The
-- plan is kept in the period's own table (code, old, new, text, created).
local amount = op == 'i' and tonumber(arg) or nil
local added = false
for _, s in ipairs(sets) do
  local code = redis.call('HGET', s.u, userId)
  local old = code and redis.call('ZSCORE', s.z, code .. userId)
  local new, text
  if op == 'i' then
    new = (old and tonumber(old) or 0) + amount
    if new ~= new or new == math.huge or new == -math.huge then return answer({ -4, s.name }) end
    -- The digits that read back as the same double (as lua/write-player.lua prints numbers).
    if new == math.floor(new) and math.abs(new) < 2^53 then
      text = string.format('%.0f', new)
    else
      for precision = 15, 17 do
        text = string.format('%.' .. precision .. 'g', new)
        if tonumber(text) == new then break end
      end
    end
  else
    new, text = tonumber(arg), arg
  end
  s.created = false
  if not old then
    local card = redis.call('ZCARD', s.z)
    if card >= maxEntries then return answer({ -3, s.name }) end
    s.created, added = card == 0, true
  end
  s.code, s.old, s.new, s.text = code, old, new, text
end

local changed, code = 0, nil
local reply = { 1, 0, 0, spec }
for i, s in ipairs(sets) do
  if not (s.old and tonumber(s.old) == s.new) then
    if not code then
      sequence = sequence + 1
      -- 62^8 - 1 - n in base 62 (0-9 A-Z a-z, in byte order), 8 characters.
      if sequence > 218340105584895 then return redis.error_reply('board sequence exhausted') end
      local n = 218340105584895 - sequence
      local d8 = n % 62; n = (n - d8) / 62
      local d7 = n % 62; n = (n - d7) / 62
      local d6 = n % 62; n = (n - d6) / 62
      local d5 = n % 62; n = (n - d5) / 62
      local d4 = n % 62; n = (n - d4) / 62
      local d3 = n % 62; n = (n - d3) / 62
      local d2 = n % 62; n = (n - d2) / 62
      local d1 = n % 62
      local function byte(d) return d < 10 and 48 + d or d < 36 and 55 + d or 61 + d end
      code = string.char(byte(d1), byte(d2), byte(d3), byte(d4), byte(d5), byte(d6), byte(d7), byte(d8))
    end
    if s.old then redis.call('ZREM', s.z, s.code .. userId) end
    redis.call('ZADD', s.z, s.text, code .. userId)
    redis.call('HSET', s.u, userId, code)
    if s.created and s.ttl > 0 then
      redis.call('PEXPIRE', s.z, s.ttl)
      redis.call('PEXPIRE', s.u, s.ttl)
    end
    changed = 1
  end
  reply[4 + i] = s.text
end
if op == 'f' then redis.call('HSET', F, userId, ARGV[8]) end
reply[2] = changed
reply[3] = settle(META, sets, counted, added, code and sequence)
return answer(reply)
