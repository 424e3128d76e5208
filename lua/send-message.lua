--[[
  Leave a message for a player (docs/safe-saves.md, "Messages to players"): it waits in the
  player's own slot until a save acknowledges it (write-player.lua) or it expires. Expired
  messages are dropped here on the way. Time is Redis's clock.

  The inbox hash: field = message id (`msg_<sent ms><seq, 6 digits>`, so ids sort as they were
  sent), value = `<sent ms>|<expires ms>|<the message as JSON>`; field `#` = the last sequence
  number. The hash expires a minute after its last message would.

  Input:
    KEYS[1] the player's inbox (hash)
    KEYS[2] the player's idempotency record for this request (used only when ARGV[4] is not '')
    ARGV[1] the message, as JSON
    ARGV[2] how long it waits, ms
    ARGV[3] most messages waiting for one player
    ARGV[4] fingerprint of the request for its idempotency key, or ''
    ARGV[5] seconds an idempotency record is kept

  Output:
    { 1, id, sentAtMs, expiresAtMs, bytes }  left; bytes: what it holds in the inbox (id + value)
    { -10, waiting }                        INBOX_FULL: the most messages already wait
    { 2, '<the first answer, as JSON>' }    replay of the idempotency key's first answer
    { -8 }                                  IDEMPOTENCY_KEY_REUSED (not recorded)
]]
local M, I = KEYS[1], KEYS[2]
local idemFp, idemTtl = ARGV[4], ARGV[5]

--- @include "includes/idempotency.lua"
--- @include "includes/session.lua"
--- @include "includes/inbox.lua"

local now = redisClockMs()
local waiting, _, latest = liveMessages(M, now)
if #waiting >= tonumber(ARGV[3]) then return answer({ -10, #waiting }) end

local seq = redis.call('HINCRBY', M, '#', 1)
local id = 'msg_' .. now .. string.format('%06d', seq % 1000000)
local expires = now + tonumber(ARGV[2])
local value = now .. '|' .. expires .. '|' .. ARGV[1]
redis.call('HSET', M, id, value)
redis.call('PEXPIREAT', M, math.max(latest, expires) + 60000)
return answer({ 1, id, now, expires, #id + #value })
