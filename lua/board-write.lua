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
            last sequence number, `n` entries counted into the workspace's storage total
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
    { -5 }            IDEMPOTENCY_KEY_REUSED; not recorded
  Nothing is written for a negative answer; -3 and -4 are recorded under the idempotency key.
]]
local META, I, F = KEYS[1], KEYS[2], KEYS[3]
local op, userId, arg, spec = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local maxEntries, idemTtl = string.match(ARGV[6], '^(%d+) (%d+)$')
maxEntries = tonumber(maxEntries)
local idemFp = ARGV[7]

-------- idempotency prologue: lua/write-player.lua's first lines, to become the shared include --------
if idemFp ~= '' then
  local kept = redis.call('GET', I)
  if kept then
    local nl = string.find(kept, '\n', 1, true)
    if string.sub(kept, 1, nl - 1) ~= idemFp then return { -5 } end
    return { 2, string.sub(kept, nl + 1) }
  end
end

local function answer(reply)
  if idemFp ~= '' then
    redis.call('SET', I, idemFp .. '\n' .. cjson.encode(reply), 'EX', idemTtl)
  end
  return reply
end
-------- end of the idempotency prologue --------

local sets = {}
do
  local ttls = {}
  for t in string.gmatch(ARGV[5], '%d+') do ttls[#ttls + 1] = tonumber(t) end
  local k = 4
  for name in string.gmatch(spec, '%S+') do
    local s = { name = name, z = KEYS[k], u = KEYS[k + 1], ttl = ttls[#sets + 1] }
    k = k + 2
    if name ~= 'all' then
      s.pz, s.pu = KEYS[k], KEYS[k + 1]
      k = k + 2
    end
    sets[#sets + 1] = s
  end
end

-- The entries of every sorted set passed, against what the workspace's total counts for the
-- board: a period that expired since the last write is taken off here.
local function recount()
  local live = 0
  for _, s in ipairs(sets) do
    live = live + redis.call('ZCARD', s.z)
    if s.pz then live = live + redis.call('ZCARD', s.pz) end
  end
  local before = tonumber(redis.call('HGET', META, 'n') or '0')
  if live ~= before then redis.call('HSET', META, 'n', live) end
  return live - before
end

local function remove()
  local deleted = 0
  for _, s in ipairs(sets) do
    for _, pair in ipairs({ { s.z, s.u }, { s.pz or false, s.pu or false } }) do
      if pair[1] then
        local code = redis.call('HGET', pair[2], userId)
        if code then
          if redis.call('ZREM', pair[1], code .. userId) == 1 then deleted = 1 end
          redis.call('HDEL', pair[2], userId)
        end
      end
    end
  end
  return deleted
end

if op == 'd' or op == 'e' then
  local deleted = remove()
  if op == 'e' then redis.call('HDEL', F, userId) end
  return answer({ 1, deleted, recount() })
end

local kept = redis.call('HGET', META, 'p')
if not kept then return { -1 } end
if kept ~= spec then return { -2, kept } end

if op == 'f' then
  local last = redis.call('HGET', F, userId)
  if last and tonumber(last) >= tonumber(ARGV[8]) then return { 1, 0, 0 } end
  if arg == '' then
    redis.call('HSET', F, userId, ARGV[8])
    return { 1, remove(), recount() }
  end
end

local function formatNumber(value)
  -- The digits that read back as the same double (as lua/write-player.lua prints numbers).
  if value == math.floor(value) and math.abs(value) < 2^53 then return string.format('%.0f', value) end
  local text
  for precision = 15, 17 do
    text = string.format('%.' .. precision .. 'g', value)
    if tonumber(text) == value then break end
  end
  return text
end

-- First pass: each period's current and new score, and every refusal, before any write.
local amount = op == 'i' and tonumber(arg) or nil
local plan = {}
for i, s in ipairs(sets) do
  local code = redis.call('HGET', s.u, userId)
  local old = code and redis.call('ZSCORE', s.z, code .. userId)
  local new, text
  if op == 'i' then
    new = (old and tonumber(old) or 0) + amount
    if new ~= new or new == math.huge or new == -math.huge then return answer({ -4, s.name }) end
    text = formatNumber(new)
  else
    new, text = tonumber(arg), arg
  end
  local created = false
  if not old then
    local card = redis.call('ZCARD', s.z)
    if card >= maxEntries then return answer({ -3, s.name }) end
    created = card == 0
  end
  plan[i] = { code = code, old = old, new = new, text = text, created = created }
end

local SEQUENCE_MAX = 218340105584895 -- 62^8 - 1
local ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
local function sequenceCode(sequence)
  local n, out = SEQUENCE_MAX - sequence, {}
  for i = 8, 1, -1 do
    local digit = n % 62
    out[i] = string.sub(ALPHABET, digit + 1, digit + 1)
    n = (n - digit) / 62
  end
  return table.concat(out)
end

local changed, code = 0, nil
local reply = { 1, 0, 0, spec }
for i, s in ipairs(sets) do
  local p = plan[i]
  if p.old and tonumber(p.old) == p.new then
    reply[4 + i] = p.text
  else
    if not code then
      local sequence = redis.call('HINCRBY', META, 's', 1)
      if sequence > SEQUENCE_MAX then return redis.error_reply('board sequence exhausted') end
      code = sequenceCode(sequence)
    end
    if p.old then redis.call('ZREM', s.z, p.code .. userId) end
    redis.call('ZADD', s.z, p.text, code .. userId)
    redis.call('HSET', s.u, userId, code)
    if p.created and s.ttl > 0 then
      redis.call('PEXPIRE', s.z, s.ttl)
      redis.call('PEXPIRE', s.u, s.ttl)
    end
    changed = 1
    reply[4 + i] = p.text
  end
end
if op == 'f' then redis.call('HSET', F, userId, ARGV[8]) end
reply[2] = changed
reply[3] = recount()
return answer(reply)
