--[[
  A player's rank and score in one period of a leaderboard, and the entries around it, in one
  read: the member is found through the period's member hash (user id -> sequence code).

  Input:
    KEYS[1] the board's meta hash (`p`: the periods it keeps)
    KEYS[2] the period's sorted set
    KEYS[3] the period's member hash
    ARGV[1] the period asked for ('all', 'daily', 'weekly' or 'monthly')
    ARGV[2] 'd' highest score first, 'a' lowest first
    ARGV[3] user id
    ARGV[4] entries wanted above and below the player (0-50)

  Output:
    { 1, rank, score, firstRank, member1, score1, ... }  rank: 0-based in the order asked;
        score as Redis prints it; then, when ARGV[4] > 0, the entries from firstRank on (the
        player among them)
    { 0 }            the player is not on this period (nor is anyone, on a board not registered)
    { -2, periods }  PERIOD_NOT_KEPT: the player is not found and the board keeps only `periods`
]]
local META, Z, U = KEYS[1], KEYS[2], KEYS[3]
local period, desc, userId, around = ARGV[1], ARGV[2] == 'd', ARGV[3], tonumber(ARGV[4])

local code = redis.call('HGET', U, userId)
local member = code and code .. userId
local score = member and redis.call('ZSCORE', Z, member)
if not score then
  -- Not found: says why when the board does not keep the period (one read less when found).
  local kept = redis.call('HGET', META, 'p')
  if kept and not string.find(' ' .. kept .. ' ', ' ' .. period .. ' ', 1, true) then return { -2, kept } end
  return { 0 }
end
local rank = desc and redis.call('ZREVRANK', Z, member) or redis.call('ZRANK', Z, member)
local reply = { 1, rank, score }
if around > 0 then
  local first = math.max(0, rank - around)
  reply[4] = first
  local found
  if desc then
    found = redis.call('ZREVRANGE', Z, first, rank + around, 'WITHSCORES')
  else
    found = redis.call('ZRANGE', Z, first, rank + around, 'WITHSCORES')
  end
  for i = 1, #found do reply[4 + i] = found[i] end
end
return reply
