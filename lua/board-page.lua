--[[
  One page of a leaderboard's period, after a cursor, within a score range, in one read.

  A cursor is the last entry of the previous page: its score (as Redis printed it) and member.
  The page starts right after that point in the order (score, then member), which is a total
  order, so an entry whose score does not change while a client pages lies on one side of
  every cursor and is shown exactly once. When the cursor's entry is still where it was, the
  page starts after its rank (ZREVRANK); when it has moved or gone, after the place it held,
  found by counting the higher scores and searching the equal ones by member (their ranks are
  consecutive, so a binary search of ZRANGE by rank, O(log^2 N)).

  Input:
    KEYS[1] the board's meta hash (`p`: the periods it keeps)
    KEYS[2] the period's sorted set (member = 8-character sequence code, then the user id)
    ARGV[1] the period asked for ('all', 'daily', 'weekly' or 'monthly')
    ARGV[2] 'd' highest score first, 'a' lowest first (the exact reverse, ties included)
    ARGV[3] most entries (1-100)
    ARGV[4] the cursor's score, or '' for the first page
    ARGV[5] the cursor's member ('' for the first page)
    ARGV[6] lowest score shown ('-inf' for any)
    ARGV[7] highest score shown ('+inf' for any)

  Output:
    { 1, firstRank, more, member1, score1, member2, score2, ... }  firstRank is the 0-based
        rank of the first entry in the whole period; more is 1 when entries follow the page
    { -2, periods }  PERIOD_NOT_KEPT: the page is empty and the board keeps only `periods`
  A board that is not registered yet has no entries: { 1, 0, 0 }. A period the board no longer
  keeps is read as any other while it holds entries (they expire with it).
]]
local META, Z = KEYS[1], KEYS[2]
local period, desc, limit = ARGV[1], ARGV[2] == 'd', tonumber(ARGV[3])
local afterScore, afterMember, min, max = ARGV[4], ARGV[5], ARGV[6], ARGV[7]

-- An empty answer says why: a board not registered has no entries; a period it does not keep
-- is refused. (A period it no longer keeps is read while its entries live.)
local function empty(start)
  local kept = redis.call('HGET', META, 'p')
  if kept and not string.find(' ' .. kept .. ' ', ' ' .. period .. ' ', 1, true) then return { -2, kept } end
  return { 1, start, 0 }
end

-- Ranks are 0-based in the order asked; `from` and `to` bound the score range, `to` excluded.
local from, to
if desc then
  from = max == '+inf' and 0 or redis.call('ZCOUNT', Z, '(' .. max, '+inf')
  to = min == '-inf' and redis.call('ZCARD', Z) or redis.call('ZCOUNT', Z, min, '+inf')
else
  from = min == '-inf' and 0 or redis.call('ZCOUNT', Z, '-inf', '(' .. min)
  to = max == '+inf' and redis.call('ZCARD', Z) or redis.call('ZCOUNT', Z, '-inf', max)
end

local function memberAt(rank)
  local found = desc and redis.call('ZREVRANGE', Z, rank, rank) or redis.call('ZRANGE', Z, rank, rank)
  return found[1]
end

-- Byte order, as Redis orders members: Lua's `<` on strings follows the server's locale.
local function less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- The rank right after the cursor's place.
local function after()
  local now = redis.call('ZSCORE', Z, afterMember)
  if now and tonumber(now) == tonumber(afterScore) then
    return (desc and redis.call('ZREVRANK', Z, afterMember) or redis.call('ZRANK', Z, afterMember)) + 1
  end
  local lo, hi
  if desc then
    lo = redis.call('ZCOUNT', Z, '(' .. afterScore, '+inf')
    hi = redis.call('ZCOUNT', Z, afterScore, '+inf')
  else
    lo = redis.call('ZCOUNT', Z, '-inf', '(' .. afterScore)
    hi = redis.call('ZCOUNT', Z, '-inf', afterScore)
  end
  -- Among the equal scores (ranks lo .. hi-1), the first member past the cursor's.
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local member = memberAt(mid)
    local past
    if desc then past = less(member, afterMember) else past = less(afterMember, member) end
    if past then hi = mid else lo = mid + 1 end
  end
  return lo
end

local start = from
if afterScore ~= '' then start = math.max(start, after()) end
local stop = math.min(start + limit, to) - 1
if stop < start then return empty(start) end
local reply = { 1, start, 0 }
local found
if desc then
  found = redis.call('ZREVRANGE', Z, start, stop, 'WITHSCORES')
else
  found = redis.call('ZRANGE', Z, start, stop, 'WITHSCORES')
end
for i = 1, #found do reply[3 + i] = found[i] end
if stop + 1 < to then reply[3] = 1 end
return reply
