--[[
  Write one entry of a player's data hash, unless it would take the player past the most
  entries allowed. Replacing an existing entry is always allowed.

  Input:
    KEYS[1] player data hash
    ARGV[1] field: the data key
    ARGV[2] stored form of the entry: the JSON array `[updated_at_ms,value]`
    ARGV[3] most entries a player may have

  Output:
    1   written
    -3  the player already has the most entries allowed (nothing is written)
]]
-- HLEN first: it is O(1) and, for a player below the maximum (nearly every write), the only
-- check needed.
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[3])
    and redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return -3
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
