--[[
  Included (--- @include) by the player scripts. A player hash written before versions existed
  (the release of 2026-11-23 and earlier) has no meta fields (\0v, \0n, \0b, ...): its counts
  are computed here, once, by the first script that needs them.

  Defines legacyCounts(P): the number of data fields of hash P and their bytes (key names plus
  stored entries). Meta fields (names starting with a NUL byte) are not data.
]]
local function legacyCounts(P)
  local nKeys, nBytes = 0, 0
  for _, field in ipairs(redis.call('HKEYS', P)) do
    if string.byte(field, 1) ~= 0 then
      nKeys = nKeys + 1
      nBytes = nBytes + #field + redis.call('HSTRLEN', P, field)
    end
  end
  return nKeys, nBytes
end
