--[[
  Included (--- @include) by the scripts that read a player's waiting messages: send-message.lua,
  write-player.lua, player-session.lua. The inbox hash: field = message id, value = `<sent ms>|
  <expires ms>|<message JSON>`; field `#` = the last sequence number (send-message.lua).

  Defines liveMessages(M, now): the messages still waiting, oldest first, each
  { id, sentAt, expiresAt, json, bytes }; expired ones are dropped on the way (HDEL). Also
  answers the bytes dropped and the latest expiry of those kept (0 for none).

  Defines handOver(M, now, after): the waiting messages with an id after `after` ('' for all),
  oldest first, as JSON texts `["<id>",<sent ms>,<message>]`, at most HAND_MAX_BYTES of
  messages in one call (one at least, whatever its size): the rest are handed by the next save.
  Also answers the last id handed (nil for none).
]]
-- 64 KiB of messages an answer: an acquire of 100 players hands at most 6.4 MiB, and a kept
-- answer (idempotency) holds at most that much of them.
local HAND_MAX_BYTES = 65536

local function liveMessages(M, now)
  local all = redis.call('HGETALL', M)
  local live, expired, dropped, latest = {}, {}, 0, 0
  for i = 1, #all, 2 do
    local id, value = all[i], all[i + 1]
    if id ~= '#' then
      local sent, expires, json = string.match(value, '^(%d+)|(%d+)|(.*)$')
      expires = tonumber(expires)
      if expires <= now then
        expired[#expired + 1] = id
        dropped = dropped + #id + #value
      else
        live[#live + 1] = { id = id, sentAt = tonumber(sent), expiresAt = expires, json = json, bytes = #id + #value }
        if expires > latest then latest = expires end
      end
    end
  end
  if #expired > 0 then redis.call('HDEL', M, unpack(expired)) end
  table.sort(live, function(a, b) return a.id < b.id end)
  return live, dropped, latest
end

local function handOver(M, now, after)
  local parts, last, bytes = {}, nil, 0
  for _, m in ipairs(liveMessages(M, now)) do
    if m.id > after then
      if #parts > 0 and bytes + #m.json > HAND_MAX_BYTES then break end
      parts[#parts + 1] = '["' .. m.id .. '",' .. m.sentAt .. ',' .. m.json .. ']'
      bytes = bytes + #m.json
      last = m.id
    end
  end
  return parts, last
end
