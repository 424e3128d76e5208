--[[
  Included (--- @include) by the player scripts that judge the session lock. The lock lives in
  the player hash, field \0s: `<id>|<expires ms>|<lease ms>|<owner>`, judged by Redis's clock
  (the same for every instance of the service).

  Defines:
    redisClockMs()      Redis's clock, ms since the epoch
    parseSession(text)  id, expires (number), lease (number), owner of a \0s value
]]
local function redisClockMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function parseSession(text)
  local id, expires, lease, owner = string.match(text, '^([^|]*)|(%d+)|(%d+)|(.*)$')
  return id, tonumber(expires), tonumber(lease), owner
end
