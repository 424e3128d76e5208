--[[
  Empties a leaderboard: every period passed loses every entry, and the board's followed
  versions go too. With ARGV[1] 'drop' the board's meta goes as well (the board is deleted;
  its registry entry is removed by the caller first). The sequence number is kept on a reset,
  so a code is never given twice on one board.

  Input:
    KEYS[1] the board's meta hash (`n`: entries counted into the workspace's storage total)
    KEYS[2] the board's followed versions
    KEYS[3..] sorted sets and member hashes of the periods to empty, in pairs
    ARGV[1] 'reset' or 'drop'

  Output:
    { entriesRemoved, entriesDelta }  entriesDelta: the change of the entries counted into
        storage (minus what was counted)
]]
local META, F = KEYS[1], KEYS[2]
local removed = 0
for i = 3, #KEYS, 2 do
  removed = removed + redis.call('ZCARD', KEYS[i])
  redis.call('UNLINK', KEYS[i], KEYS[i + 1])
end
redis.call('UNLINK', F)
local counted = tonumber(redis.call('HGET', META, 'n') or '0')
if ARGV[1] == 'drop' then
  redis.call('UNLINK', META)
elseif counted ~= 0 then
  redis.call('HSET', META, 'n', 0)
end
return { removed, -counted }
