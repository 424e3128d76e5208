--[[
  Record when API keys of one workspace were last used, keeping the latest time when several
  instances report the same key. Nothing is written once the workspace is gone, so a flush that
  races a workspace deletion cannot leave a stray hash behind.

  Input:
    KEYS[1] the workspace's metadata hash
    KEYS[2] the workspace's last-used hash (key id -> ms since the epoch)
    ARGV[1], ARGV[2], ...  pairs of key id and time used (integer ms)

  Output:
    the number of key ids whose time moved forward, or -1 when the workspace does not exist
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local updated = 0
for i = 1, #ARGV, 2 do
  local old = redis.call('HGET', KEYS[2], ARGV[i])
  if not old or tonumber(old) < tonumber(ARGV[i + 1]) then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    updated = updated + 1
  end
end
return updated
