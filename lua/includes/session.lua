--[[
  Included (--- @include) by the player scripts that judge the session lock. The lock lives in
  the player hash, field \0s: `<id>|<expires ms>|<lease ms>|<owner>`, judged by Redis's clock
  (the same for every instance of the service).

  Defines:
    redisClockMs()      Redis's clock, ms since the epoch
    parseSession(text)  id, expires (number), lease (number), owner of a \0s value
    heldChange(text, sign)  notes (in heldChanges) that a player held without data (version 0)
                        by the session `text` (its \0s value) starts (sign 1) or stops (-1)
                        counting in its workspace's storage totals: `<minute> <bytes>`, the
                        minute its hash has surely expired in (the lease's end and the 60 s
                        margin, ms / 60,000) and what the hash costs Redis
    heldChanges         those notes, joined by ' ' for the reply (table.concat(heldChanges, ' '))
]]
local function redisClockMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function parseSession(text)
  local id, expires, lease, owner = string.match(text, '^([^|]*)|(%d+)|(%d+)|(.*)$')
  return id, tonumber(expires), tonumber(lease), owner
end

-- What a player held without data costs Redis: MEMORY USAGE of its hash (its key, meta fields
-- \0v \0n \0b \0h \0f \0c, the session field, and \0md once messages were handed over). A
-- session field over 64 bytes (an owner over 15 characters) turns the hash into a hashtable
-- (hash-max-listpack-value), which costs about 370 B more. Measured on Redis 7.0: 200-280 B
-- (listpack), 584-776 B (hashtable); test/store/players/redis-memory.test.ts holds it within
-- ±20% on a single Redis and a cluster. saves/storage-quota.ts's heldBytesOf is the same.
local function heldBytes(text)
  if #text > 64 then return 520 + #text end
  return 185 + #text
end

local heldChanges = {}
local function heldChange(text, sign)
  local _, expires = parseSession(text)
  if not expires then return end
  heldChanges[#heldChanges + 1] = math.floor((expires + 60000) / 60000) .. ' ' .. (sign * heldBytes(text))
end
