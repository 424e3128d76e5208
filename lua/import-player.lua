--[[
  Import one player from a workspace export (admin/workspace-transfer.ts), atomically in its
  own slot: the player's data fields and meta (\0v version, \0n keys, \0b bytes; see
  write-player.lua) are written together, or nothing is. Sessions are never imported.

  A player "exists" when it holds at least one data key (a player whose data was all deleted
  keeps only its version and reads as not found, so an import may fill it).
  - New player: the imported version and updated_at are kept, so reads answer exactly what the
    exported workspace answered; when the hash already carries a higher version (data deleted
    earlier), the version moves past it instead, so a number once used never comes back.
  - Existing player, mode 'skip': nothing is written.
  - Existing player, mode 'overwrite': when its data is already exactly the imported data
    (a re-run after an interruption), nothing is written; else every data key is replaced and
    the version becomes max(imported, current + 1), so a stale ifVersion never matches.
  - A player held by a live session is refused in any mode when something would be written
    (the server would save what it holds over the import).
  Whenever data is written, the player's restore points are dropped: they undo writes of data
  that is no longer there, so they could not rebuild a true past version.

  Input:
    KEYS[1] the player hash
    KEYS[2] the player's fine restore points (list, same slot)
    KEYS[3] the player's coarse restore points (list, same slot)
    KEYS[4] the restore points' own meta (hash, same slot)
    ARGV[1] mode: 'skip' or 'overwrite'
    ARGV[2] the imported version (a non-negative integer)
    ARGV[3] most data keys a player may have
    ARGV[4] most bytes of data a player may have (key names + stored entries)
    ARGV[5..] the imported data: key, stored entry (`[updated_at_ms,<JSON>]`), key, entry, ...

  Output:
    { status, version, dataBytesDelta, playersDelta, historyBytesDelta }
      status 1  written as a new player
      status 2  replaced an existing player (overwrite)
      status 0  skipped: the player exists (skip), nothing written
      status 3  unchanged: the player already holds exactly this data, nothing written
    { -3, version, keys }              TOO_MANY_KEYS: the import has more keys than allowed
    { -7, version, bytes }             PLAYER_TOO_LARGE: the import's size in bytes
    { -5, version, owner, expiresAtMs } SESSION_LOCKED: a live session holds the player
]]
local P, H, HC, HM = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode = ARGV[1]
local imported = tonumber(ARGV[2])
--- @include "includes/player-meta.lua"
--- @include "includes/session.lua"

local meta = redis.call('HMGET', P, '\0v', '\0n', '\0b', '\0h', '\0s', '\0r')
local version, nKeys, nBytes, hBytes
if meta[1] then
  version, nKeys, nBytes, hBytes = tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3]), tonumber(meta[4] or '0')
else
  nKeys, nBytes = legacyCounts(P)
  hBytes = 0
  version = nKeys > 0 and 1 or 0
end

local newKeys, newBytes = 0, 0
for i = 5, #ARGV, 2 do
  newKeys = newKeys + 1
  newBytes = newBytes + #ARGV[i] + #ARGV[i + 1]
end
if newKeys > tonumber(ARGV[3]) then return { -3, version, newKeys } end
if newBytes > tonumber(ARGV[4]) then return { -7, version, newBytes } end

if nKeys > 0 then
  if mode ~= 'overwrite' then return { 0, version, 0, 0, 0 } end
  if nKeys == newKeys then
    local same = true
    for i = 5, #ARGV, 2 do
      if redis.call('HGET', P, ARGV[i]) ~= ARGV[i + 1] then
        same = false
        break
      end
    end
    if same then return { 3, version, 0, 0, 0 } end
  end
end

-- A player with nothing to import and no data: at most its version is kept (a player whose
-- data was deleted still answers its version).
if newKeys == 0 and nKeys == 0 and imported <= version then return { 3, version, 0, 0, 0 } end

-- A live session's server would save what it holds over the import: refused, whatever the mode.
local session = meta[5]
if session then
  local _, expires, _, owner = parseSession(session)
  if expires > redisClockMs() then return { -5, version, owner, expires } end
end

local newVersion = imported
if version > 0 and newVersion <= version then newVersion = version + 1 end

-- Every data field goes (HGETALL only when there is data to find), then the new ones and the
-- meta in one HSET; an expired session and the history meta go too.
local toDelete = { '\0h', '\0t', '\0s', '\0k' }
-- The restore points' marks (\0r, \0k, \0r<key>) go with the history they index.
if nKeys > 0 or meta[6] then
  for _, field in ipairs(redis.call('HKEYS', P)) do
    if string.byte(field, 1) ~= 0 or string.sub(field, 1, 2) == '\0r' then toDelete[#toDelete + 1] = field end
  end
end
redis.call('HDEL', P, unpack(toDelete))
redis.call('UNLINK', H, HC, HM)

local toSet = { '\0v', newVersion, '\0n', newKeys, '\0b', newBytes }
for i = 5, #ARGV do toSet[#toSet + 1] = ARGV[i] end
redis.call('HSET', P, unpack(toSet))
-- A player held before its first data (its lease lapsed, its hash within its last minute)
-- expires with that lease: imported, it is kept.
redis.call('PERSIST', P)

-- A player written before versions existed was never counted in the workspace's totals; from
-- now on it is (its meta is written), as write-player.lua will count its later writes.
local countedBefore = meta[1] and nKeys > 0
local playersDelta = (newKeys > 0 and 1 or 0) - (countedBefore and 1 or 0)
local dataDelta = newBytes - (meta[1] and nBytes or 0)
local status = nKeys > 0 and 2 or 1
return { status, newVersion, dataDelta, playersDelta, -hBytes }
