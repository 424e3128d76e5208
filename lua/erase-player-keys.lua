--[[
  Erase keys that carry one player's hash tag, in one step in the player's slot: a game
  server's write lands wholly before or wholly after it, never half-way. The caller found the
  keys (SCAN, or the slot's key list on a cluster) and runs it again until no key is left.
  Returns what the workspace's storage totals counted of them (write-player.lua's meta: \0n
  data keys, \0b data bytes, \0h history bytes; the waiting messages by the hour they expire
  in, as send-message.lua counted them), and the records in other slots that keep an answer
  naming the player (the note's members, store/players/kept-elsewhere.ts), for the caller to delete.

  Input:
    KEYS[1] the player hash (read for its meta, then deleted; missing is fine)
    KEYS[2] the player's waiting messages (hash: id -> `<sent ms>|<expires ms>|<JSON>`, `#` the
            sequence; missing is fine)
    KEYS[3] the player's note of answers kept elsewhere (sorted set; missing is fine)
    KEYS[4..] the other keys found with the player's tag: history, kept idempotency answers,
              and whatever else a release keeps under the tag

  Output:
    { keysDeleted, dataBytes, historyBytes, hadData (1 when the hash held a data key),
      { hour, bytes, hour, bytes, ... } the messages' bytes (id + stored value) by the UTC hour
      (ms / 3,600,000) each expires in,
      { member, ... } the note's members: the records kept elsewhere }
]]
local P, M, X = KEYS[1], KEYS[2], KEYS[3]
local meta = redis.call('HMGET', P, '\0v', '\0n', '\0b', '\0h')
local nKeys, nBytes, hBytes = 0, 0, 0
if meta[1] then
  nKeys, nBytes, hBytes = tonumber(meta[2]), tonumber(meta[3]), tonumber(meta[4] or '0')
else
  -- Written before versions existed: every field but a meta one is data.
  for _, field in ipairs(redis.call('HKEYS', P)) do
    if string.byte(field, 1) ~= 0 then
      nKeys = nKeys + 1
      nBytes = nBytes + #field + redis.call('HSTRLEN', P, field)
    end
  end
end

local byHour, hours = {}, {}
local inbox = redis.call('HGETALL', M)
for i = 1, #inbox, 2 do
  local id, value = inbox[i], inbox[i + 1]
  local expires = id ~= '#' and tonumber(string.match(value, '^%d+|(%d+)|'))
  if expires then
    local hour = math.floor(expires / 3600000)
    if not byHour[hour] then
      byHour[hour] = 0
      hours[#hours + 1] = hour
    end
    byHour[hour] = byHour[hour] + #id + #value
  end
end
local messages = {}
for _, hour in ipairs(hours) do
  messages[#messages + 1] = hour
  messages[#messages + 1] = byHour[hour]
end

local elsewhere = redis.call('ZRANGE', X, 0, -1)
-- UNLINK: a long history list or a large hash is freed off the main thread.
local deleted = redis.call('UNLINK', unpack(KEYS))
return { deleted, nBytes, hBytes, nKeys > 0 and 1 or 0, messages, elsewhere }
