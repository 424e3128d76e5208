--[[
  When a player was last written, read from its data: the latest updated_at of its data keys
  (each stored as `[updated_at_ms,<JSON>]`). For the players list's one-time backfill of players
  written before the list existed (`pds player index`): computed inside Redis, so the player's
  values never cross the network.

  Input:
    KEYS[1] the player hash

  Output:
    the latest updated_at (ms), or -1 when the player holds no data key
]]
local latest = -1
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  -- Meta fields start with a NUL byte; data keys never do.
  if string.byte(all[i], 1) ~= 0 then
    local ms = tonumber(string.match(all[i + 1], '^%[(%d+),'))
    if ms and ms > latest then latest = ms end
  end
end
return latest
