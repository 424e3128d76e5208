--[[
  Read all of a player's data with its version, in one consistent step, when the player is
  small (nearly always); for a larger one, only its size, so that the service can read it on a
  connection of its own (store/player-data.ts) or refuse it: one huge reply on the connection
  every workspace shares would hold up all of them, and copying megabytes through Lua costs
  Redis several times what a plain HGETALL does. Meta fields (names starting with a NUL byte,
  see write-player.lua) are left out.

  Input:
    KEYS[1] the player hash
    ARGV[1] most bytes of data (key names + stored entries) to return here

  Output:
    { 1, version, keys, bytes, key1, entry1, key2, entry2, ... }  the data keys and stored entries
    { 0, version, keys, bytes }   the player is larger than ARGV[1]: nothing returned
]]
local P = KEYS[1]
--- @include "includes/player-meta.lua"
local meta = redis.call('HMGET', P, '\0v', '\0n', '\0b')
local version, nKeys, nBytes
if meta[1] then
  version, nKeys, nBytes = tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3])
else
  nKeys, nBytes = legacyCounts(P)
  version = nKeys > 0 and 1 or 0
end

if nBytes > tonumber(ARGV[1]) then return { 0, version, nKeys, nBytes } end

local reply = { 1, version, nKeys, nBytes }
if nKeys == 0 then return reply end
local all = redis.call('HGETALL', P)
for i = 1, #all, 2 do
  if string.byte(all[i], 1) ~= 0 then
    reply[#reply + 1] = all[i]
    reply[#reply + 1] = all[i + 1]
  end
end
return reply
