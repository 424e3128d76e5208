--[[
  Acquire, renew or release the session lock of one player: the lease that says which game
  server may write the player now. The lock lives in the player hash itself (field \0s, see
  write-player.lua for the layout), so write-player.lua checks it in the same step as every
  write. Time is Redis's clock.

  Input:
    KEYS[1] the player hash
    KEYS[2] the player's idempotency record for this request (used only when ARGV[6] is not empty)
    KEYS[3] the player's waiting messages (includes/inbox.lua; read only by an acquire with ARGV[9])
    ARGV[1] 'acquire', 'renew' or 'release'
    ARGV[2] session id: the new one for acquire, the holder's for renew and release
    ARGV[3] owner (acquire only): the game server's id
    ARGV[4] lease, ms; '' on renew keeps the session's own
    ARGV[5] '1' to take the lock from a live holder (acquire only), else ''
    ARGV[6] fingerprint of the request for its idempotency key, or ''
    ARGV[7] seconds an idempotency record is kept
    ARGV[8] '1' when the workspace is at or over its storage quota, else ''
    ARGV[9] acquire only: '1' to hand the new session the messages waiting (the join's load; up
            to includes/inbox.lua's HAND_MAX_BYTES, its saves hand the rest)

  Output:
    { 1, version, sessionId, owner, expiresAtMs, firstSessionAtMs, sessionCount, messages, held }
                                                    acquired: the player's first session's time and
                                                    sessions so far (this one counted); messages:
                                                    '' or `[[id,sentAtMs,<message>],...]` oldest first
    { 1, version, sessionId, owner, expiresAtMs, held }  renewed
    { 1, version, released, held }                  release: 1 when this call released it, else 0
  held: what a player without data (version 0) adds to or takes off its workspace's storage
  totals, `<minute> <bytes> ...` (includes/session.lua's heldChange), '' for nothing: its hash
  counts from its acquire until the minute it expires in, moved by a renew, taken off by a
  release. (Answers kept by the release before have no held field: they count nothing.)
    { -5, version, owner, expiresAtMs }             SESSION_LOCKED: another live session holds it
    { -6, version }                                 SESSION_LOST: renew of a session that no longer holds it
    { -9, 0 }                                       STORAGE_QUOTA_EXCEEDED: an acquire of a player that
                                                    never had data, in a workspace at or over its quota
  A player that never had data (version 0) is kept only while a session holds it: its hash
  expires a minute after the lease, and a release deletes it; its first write keeps it for good.
    { 2, '<the first answer, as JSON>' }            replay of the idempotency key's first answer
    { -8 }                                          IDEMPOTENCY_KEY_REUSED (not recorded)
  Every answer but -8 is recorded under the idempotency key when there is one.
]]
local P, I, M = KEYS[1], KEYS[2], KEYS[3]
local action, idemFp, idemTtl = ARGV[1], ARGV[6], ARGV[7]

--- @include "includes/idempotency.lua"
--- @include "includes/player-meta.lua"
--- @include "includes/session.lua"
--- @include "includes/inbox.lua"

-- A player written before versions existed gets its meta here, as write-player.lua would.
local version = redis.call('HGET', P, '\0v')
if version then
  version = tonumber(version)
else
  local nKeys, nBytes = legacyCounts(P)
  version = nKeys > 0 and 1 or 0
  if version == 0 and action == 'acquire' and ARGV[8] == '1' then return answer({ -9, 0 }) end
  if action ~= 'release' then
    redis.call('HSET', P, '\0v', version, '\0n', nKeys, '\0b', nBytes, '\0h', 0)
  end
end

local clock = redisClockMs()
local id, expires, ttl, owner
local session = redis.call('HGET', P, '\0s')
if session then
  id, expires, ttl, owner = parseSession(session)
  if expires <= clock then id = nil end
end

-- A player that never had data is kept only for its session (the margin: a server's clock).
local function keepWhileHeld(until_)
  if version == 0 then redis.call('PEXPIREAT', P, until_ + 60000) end
end

if action == 'acquire' then
  if id and ARGV[5] ~= '1' and owner ~= ARGV[3] then
    return answer({ -5, version, owner, expires })
  end
  if version == 0 and ARGV[8] == '1' then return answer({ -9, 0 }) end
  local until_ = clock + tonumber(ARGV[4])
  -- A new session is handed the messages waiting when it loads the player (up to the bytes
  -- an answer holds; its saves hand the rest), and none before.
  local messages, handed = '', nil
  if ARGV[9] == '1' then
    local parts
    parts, handed = handOver(M, clock, '')
    if #parts > 0 then messages = '[' .. table.concat(parts, ',') .. ']' end
  end
  local first = redis.call('HGET', P, '\0f') or tostring(clock)
  local count = redis.call('HINCRBY', P, '\0c', 1)
  local text = ARGV[2] .. '|' .. until_ .. '|' .. ARGV[4] .. '|' .. ARGV[3]
  redis.call('HSET', P, '\0s', text, '\0f', first)
  if handed then redis.call('HSET', P, '\0md', handed) else redis.call('HDEL', P, '\0md') end
  keepWhileHeld(until_)
  if version == 0 then
    -- The session before (live, stolen or lapsed within the hash's margin) stops counting.
    if session then heldChange(session, -1) end
    heldChange(text, 1)
  end
  return answer({ 1, version, ARGV[2], ARGV[3], until_, tonumber(first), count, messages, table.concat(heldChanges, ' ') })
end

if action == 'renew' then
  if id ~= ARGV[2] then return answer({ -6, version }) end
  local lease = ARGV[4] ~= '' and ARGV[4] or ttl
  local until_ = clock + tonumber(lease)
  local text = id .. '|' .. until_ .. '|' .. lease .. '|' .. owner
  redis.call('HSET', P, '\0s', text)
  keepWhileHeld(until_)
  if version == 0 then
    heldChange(session, -1)
    heldChange(text, 1)
  end
  return answer({ 1, version, id, owner, until_, table.concat(heldChanges, ' ') })
end

-- release: only the holder's own id removes the lock; anything else changes nothing.
if session and string.match(session, '^([^|]*)|') == ARGV[2] then
  if version == 0 then
    redis.call('DEL', P)
    heldChange(session, -1)
  else
    redis.call('HDEL', P, '\0s', '\0md')
  end
  return answer({ 1, version, 1, table.concat(heldChanges, ' ') })
end
return answer({ 1, version, 0, '' })
