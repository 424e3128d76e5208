--[[
  Add to a numeric entry of a player's data hash, atomically, starting from a default
  when the entry does not exist. Entries are stored as the JSON array `[updated_at_ms,value]`.

  Input:
    KEYS[1] player data hash
    ARGV[1] field: the data key
    ARGV[2] amount, a decimal number as sent by JavaScript's String(number)
    ARGV[3] default value used when the entry does not exist, same format
    ARGV[4] updated_at, milliseconds since the epoch
    ARGV[5] most entries a player may have (a new entry beyond it is refused)

  Output:
    the new value, as the shortest decimal string that reads back as the same double
    -1  the stored value is not a number (nothing is written)
    -2  the result is not a finite number (nothing is written)
    -3  the player already has the most entries allowed (nothing is written)
]]
local stored = redis.call('HGET', KEYS[1], ARGV[1])
local base
if stored then
  local json = string.match(stored, '^%[%d+,(.*)%]$')
  -- A JSON number only: tonumber alone would also take hex, spaces, "inf" and "nan".
  if not json or not string.match(json, '^%-?%d+%.?%d*[eE]?[%+%-]?%d*$') then
    return -1
  end
  base = tonumber(json)
  if not base then return -1 end
else
  if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then return -3 end
  base = tonumber(ARGV[3])
end

local value = base + tonumber(ARGV[2])
if value ~= value or value == math.huge or value == -math.huge then return -2 end

-- Lua would print 0.1 + 0.2 as 0.3; JSON needs the digits that read back as the same double.
local text
if value == math.floor(value) and math.abs(value) < 2^53 then
  text = string.format('%.0f', value)
else
  for precision = 15, 17 do
    text = string.format('%.' .. precision .. 'g', value)
    if tonumber(text) == value then break end
  end
end

redis.call('HSET', KEYS[1], ARGV[1], '[' .. ARGV[4] .. ',' .. text .. ']')
return text
