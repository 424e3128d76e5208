--[[
  Loads entries of one period of a leaderboard from an export, in the export's order (the
  period's ranking, best first): each gets the board's next sequence number, so players tied
  on a score keep their order. A player already on the period is moved to the imported score.

  Input:
    KEYS[1] the board's meta hash (`s` the last sequence number, `n` entries counted)
    KEYS[2] the period's sorted set
    KEYS[3] the period's member hash
    ARGV[1] ms the period's keys live from now (0: all-time, no expiry)
    ARGV[2] most entries a period holds
    ARGV[3..] user id, score (decimal text), user id, score, ...

  Output:
    { written, entriesDelta }  written: entries loaded; entriesDelta: the change of the period's
        entries, added to the meta's count
    { -3, written, entriesDelta }  BOARD_FULL: the period reached the most entries after `written`
]]
local META, Z, U = KEYS[1], KEYS[2], KEYS[3]
local ttl, maxEntries = tonumber(ARGV[1]), tonumber(ARGV[2])

local SEQUENCE_MAX = 218340105584895 -- 62^8 - 1, as lua/board-write.lua
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

local before = redis.call('ZCARD', Z)
local card, written, full = before, 0, false
for i = 3, #ARGV, 2 do
  local userId, score = ARGV[i], ARGV[i + 1]
  local code = redis.call('HGET', U, userId)
  if code then
    card = card - redis.call('ZREM', Z, code .. userId)
  end
  if card >= maxEntries then
    full = true
    break
  end
  code = sequenceCode(redis.call('HINCRBY', META, 's', 1))
  redis.call('ZADD', Z, score, code .. userId)
  redis.call('HSET', U, userId, code)
  card = card + 1
  written = written + 1
end
if before == 0 and card > 0 and ttl > 0 then
  redis.call('PEXPIRE', Z, ttl)
  redis.call('PEXPIRE', U, ttl)
end
local delta = card - before
if delta ~= 0 then redis.call('HINCRBY', META, 'n', delta) end
if full then return { -3, written, delta } end
return { written, delta }
