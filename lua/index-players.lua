--[[
  Record players' last writes in a workspace's players list (a sorted set, user id -> ms of the
  last write), or take players whose data was deleted entirely off it. Several instances report
  the same player in any order: a write keeps the latest time (ZADD GT), and a removal applies
  only when no later write is known, so a removal reported late never hides a player written
  again since. Nothing is written once the workspace is gone, so a flush that races a
  workspace deletion cannot leave a stray list behind.

  Input:
    KEYS[1] the workspace's metadata hash
    KEYS[2] the workspace's players list (sorted set)
    ARGV[1], ARGV[2], ...  pairs of user id and time: `<ms>` for a write, `-<ms>` for a removal
                           (the player's data deleted entirely at that time)

  Output:
    the number of pairs that changed the list, or -1 when the workspace does not exist
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
-- A run of writes goes in one ZADD of many members (at most RUN pairs, under Lua's unpack limit):
-- the list sits in the workspace's slot, and one command per written player made its master the
-- busiest of a cluster (test-long/fleet). Removals are applied in their place between runs, so
-- the outcome and the count are those of one ZADD per pair.
local RUN = 500
local changed = 0
local run = {}
local function addRun()
  if #run > 0 then
    changed = changed + redis.call('ZADD', KEYS[2], 'GT', 'CH', unpack(run))
    run = {}
  end
end
for i = 1, #ARGV, 2 do
  local user, at = ARGV[i], tonumber(ARGV[i + 1])
  if at >= 0 then
    run[#run + 1] = at
    run[#run + 1] = user
    if #run >= 2 * RUN then addRun() end
  else
    addRun()
    local known = redis.call('ZSCORE', KEYS[2], user)
    if known and tonumber(known) <= -at then
      changed = changed + redis.call('ZREM', KEYS[2], user)
    end
  end
end
addRun()
return changed
