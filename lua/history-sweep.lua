--[[
  Ages one player's restore points without a write (saves/history-sweep.ts runs it): drops every
  point older than the retention, the newest included, and, when its workspace's history is over
  its bound, every point but the newest; then thins what is left as the write that opens a point
  does (includes/restore-points.lua: one an hour past HISTORY_FINE_HOURS, one a day past
  HISTORY_HOURLY_HOURS, the newest point staying as it is), so that a player who stops playing
  does not keep every five-minute point of its last session for the whole retention. The same atomic step keeps the player's history byte
  count (\0h) exact, so the caller adds the bytes answered to the workspace's totals once: a
  second instance sweeping the same player finds nothing left to drop and answers 0.
  When no point is left, the lists and their index leave Redis (with a long list of the open
  point's keys, HM k), and so do the player hash's open point (\0r) and the keys recorded in it
  (\0k), with any mark per key the release before kept there (\0r<key>): the next write opens a
  new point as a first write.

  Input:
    KEYS[1] the player hash
    KEYS[2] the player's fine restore points (list)
    KEYS[3] the player's coarse restore points (list)
    KEYS[4] the restore points' index (hash field `x`) and a long list of the open point's keys (`k`)
    ARGV[1] the oldest point kept: points whose id (ms) is below it leave
    ARGV[2] '1' to keep only the newest point (the workspace's history is over its bound), or ''
    ARGV[3] '' not to thin, or `<fine cutoff ms> <daily cutoff ms>`: points older than the first
            are thinned to one an hour, older than the second to one a day

  Output:
    { droppedBytes, pointsLeft, work }: droppedBytes, what the history's bytes fell by (points
    dropped and thinning's merges); work is the bytes this step read or copied (the index, the
    points thinned, the hash's field names when the marks leave)
]]
local P, H, HC, HM = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local oldestAllowed = tonumber(ARGV[1])
local shed = ARGV[2] == '1'
local fineCutoff, dailyCutoff = string.match(ARGV[3] or '', '^(%d+) (%d+)$')

--- @include "includes/restore-points.lua"

local xText = redis.call('HGET', HM, 'x')
local hText = redis.call('HGET', P, '\0h')
local hBytes = tonumber(hText or '0')
if not xText and redis.call('EXISTS', H) == 0 then
  -- No history; a count left behind (lists removed by hand) is put right.
  if hBytes ~= 0 then redis.call('HSET', P, '\0h', 0) end
  return { hBytes, 0, 0 }
end
local index, work = loadIndex(H, xText)
work = work + (xText and #xText or 0)
local maxPoints = shed and 1 or #index.f + #index.c
local dropped = trim(index, H, HC, hBytes, maxPoints, math.huge, oldestAllowed, nil)
local left = #index.f + #index.c
if left == 0 then
  redis.call('DEL', H, HC, HM)
  -- What the index said and what \0h counted agree; \0h is what the totals hold.
  dropped = hBytes
  local marks = {}
  for _, field in ipairs(redis.call('HKEYS', P)) do
    work = work + #field
    if string.sub(field, 1, 2) == '\0r' or field == '\0k' then marks[#marks + 1] = field end
  end
  if #marks > 0 then redis.call('HDEL', P, unpack(marks)) end
  if hText then redis.call('HDEL', P, '\0h') end
  return { dropped, 0, work }
end
local moved = false
if fineCutoff and left > 1 then
  local thinned, thinWork = thin(index, H, HC, tonumber(fineCutoff))
  local daily, dailyWork = thinDaily(index, HC, tonumber(dailyCutoff))
  -- Merges only ever make the history smaller; a point moved to the coarse list alone keeps its
  -- bytes, but the index changes with it.
  dropped = dropped - thinned - daily
  work = work + thinWork + dailyWork
  moved = thinWork + dailyWork > 0
  left = #index.f + #index.c
end
if dropped > 0 or moved or not xText then
  redis.call('HSET', HM, 'x', cjson.encode(index))
  if hText then redis.call('HSET', P, '\0h', hBytes - dropped) end
end
-- A history without \0h (written before the counts) was never in the totals: nothing to take off.
return { hText and dropped or 0, left, work }
