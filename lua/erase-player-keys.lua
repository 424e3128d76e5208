--[[
  Erase keys that carry one player's hash tag, in one step in the player's slot: a game
  server's write lands wholly before or wholly after it, never half-way. The caller found the
  keys (SCAN, or the slot's key list on a cluster) and runs it again until no key is left.
  Returns what the player hash held, for the workspace's storage totals (write-player.lua's
  meta: \0n data keys, \0b data bytes, \0h history bytes).

  Input:
    KEYS[1] the player hash (read for its meta, then deleted; missing is fine)
    KEYS[2..] the other keys found with the player's tag: history, kept idempotency answers,
              and whatever else a release keeps under the tag

  Output:
    { keysDeleted, dataBytes, historyBytes, hadData (1 when the hash held a data key) }
]]
local P = KEYS[1]
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
-- UNLINK: a long history list or a large hash is freed off the main thread.
local deleted = redis.call('UNLINK', unpack(KEYS))
return { deleted, nBytes, hBytes, nKeys > 0 and 1 or 0 }
