--[[
  Apply a player's write (one op, a batch of ops, or a delete of everything) atomically, with
  every safeguard a save needs checked in the same step: the answer kept for an idempotency key,
  the session lock (fencing), the expected version, the key count and size limits. Either every
  op is applied or nothing is written (all checks run before the first write). The same step
  keeps the player's restore points (includes/restore-points.lua).

  The player hash holds the data keys (field = key, value = `[updated_at_ms,<JSON>]`) and, under
  field names that start with a NUL byte (data keys cannot hold control characters), its meta:
    \0v version    \0n data keys    \0b bytes of data (key names + stored entries)
    \0h bytes of history            \0s session: `<id>|<expires ms>|<ttl ms>|<owner>`
    \0r the open restore point, \0k the keys recorded in it (includes/restore-points.lua; a
       list over 64 bytes is in KEYS[4]'s `k` instead, and a point opened by the release before
       has a \0r<key> field a key)
    \0md the newest message handed to the session that holds the player
  A hash without \0v was written before versions existed: version 1 (0 when empty), and its
  counts are computed here once (includes/player-meta.lua).

  Input:
    KEYS[1] the player hash
    KEYS[2] the player's fine restore points (list, newest first)
    KEYS[3] the player's coarse restore points (list, newest first)
    KEYS[4] the restore points' index (hash field `x`; read only when a point is written) and
            the keys recorded in the open point when over 64 bytes (field `k`; read by a write
            within its interval when the player hash has no \0k)
    KEYS[5] the player's idempotency record for this request (read and written only when
            ARGV[4] is not empty)
    KEYS[6] the player's waiting messages (includes/inbox.lua; used only when ARGV[6] is not '')
    ARGV[1] now, ms since the epoch (updated_at of the entries written, the history's clock)
    ARGV[2] the limits, the same for every write of an instance (one argument, so a write
            carries few): `<most data keys> <most data bytes> <seconds an idempotency record
            is kept> <restore point interval, ms (0: no history)> <most restore points>
            <ms every point is kept (older: one an hour)> <oldest point kept, ms of age>
            <most history bytes (the newest point is kept whatever its size)> <ms a point is
            kept an hour apart (older: one a day)>`
    ARGV[3] the guards: '' for none, else `<expected version or ''>|<session id or ''>|<'r' to
            release the session after the write, or ''>`
    ARGV[4] fingerprint of the request for its idempotency key, or '' without a key
    ARGV[5] the kind of write and who writes, for the history: `<kind> <who>` (kind: 'set',
            'increment', 'delete', 'batch', ...; who: `key:<id>` or `admin:<actor>`)
    ARGV[6] the player's messages: '' for nothing, else `<d or -> <id> <id> ...`: 'd' hands the
            session the messages that arrived since it was last handed some (only when the
            write holds the player's live session; up to includes/inbox.lua's HAND_MAX_BYTES,
            the next save hands the rest); each id is a message this save
            acknowledges (processed): removed in the same step as the ops, none if a check fails;
            an id no longer waiting is no error (a retried save)
    ARGV[7..] ops, three values each: kind, key, argument
               's' key stored-entry        set
               'i' key '<amount> <default>' increment (decimal strings from JavaScript)
               'd' key ''                  delete
               'a' '' ''                   delete every data key (the only op when present)

  Output:
    { 3, version, dataBytesDelta, playersDelta, historyBytesDelta, inboxBytesDelta, workBytes,
      messages, r1, r2, ... }  applied; workBytes: the bytes this step read or copied inside
        Redis (the entries it replaced, the history it wrote or thinned), for the caller's byte
        budget; messages: '' or `{"d":[[id,sentAtMs,<message>],...],"a":[[bytes,expiresAtMs],...]}`,
        the messages handed to the session (oldest first) and those acknowledged (what each
        held); inboxBytesDelta: minus the acknowledged messages' bytes; r = ARGV[1] for a set
        (its updated_at), the new value
        for an increment, '0' or '1' for a delete, and for a delete of everything a single r:
        the number of keys removed. (Status 1, without the inbox, work and messages fields, is
        the layout of answers kept by the release before; script-protocol.ts reads both.)
    { 4, version, dataBytesDelta, playersDelta, historyBytesDelta, inboxBytesDelta, workBytes,
      messages, held, r1, r2, ... }  applied to a player held without data (version 0): as 3,
        with held (includes/session.lua's heldChange): its first data takes its hash off the
        held players of the storage totals, a renew moves it to its new minute, a release takes
        it off
    { 2, '<the first answer, as JSON>' }  replay of the idempotency key's first answer
    { -1, version, opIndex }   NOT_A_NUMBER: the stored value is not a number
    { -2, version, opIndex }   NUMBER_OUT_OF_RANGE: the result is not a finite number
    { -3, version, -1 }        TOO_MANY_KEYS
    { -4, version }            VERSION_CONFLICT
    { -5, version, owner, expiresAtMs }  SESSION_LOCKED: a live session holds the player
    { -6, version }            SESSION_LOST: the session sent no longer holds the player
    { -7, version, bytes }     PLAYER_TOO_LARGE: the size the player would have
    { -8 }                     IDEMPOTENCY_KEY_REUSED (not recorded)
  Every answer but -8 is recorded under the idempotency key when there is one.
]]
local P, H, HC, HM, I, M = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now = ARGV[1]
local maxKeys, maxBytes, idemTtl, histInterval, histMaxPoints, histFineMs, histMaxAgeMs, histMaxBytes, histHourlyMs =
  string.match(ARGV[2], '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
local ifVersion, sessionId, release = '', '', ''
if ARGV[3] ~= '' then ifVersion, sessionId, release = string.match(ARGV[3], '^(%d*)|([%w_%-]*)|(r?)$') end
local idemFp = ARGV[4]
-- The longest list of the open point's keys kept in the player hash (\0k): a compact hash keeps
-- each value within hash-max-listpack-value (64 by default); a longer one goes to HM k.
local SMALL_LIST = 64
local deleteAll = ARGV[7] == 'a'

--- @include "includes/idempotency.lua"
--- @include "includes/player-meta.lua"
--- @include "includes/session.lua"
--- @include "includes/restore-points.lua"
--- @include "includes/inbox.lua"

-- The player's meta and the ops' current entries in one read, and the counts of a player
-- written before versions existed.
local fields = { '\0v', '\0n', '\0b', '\0h', '\0s', '\0r', '\0md', '\0k' }
local FIRST_OP = 7
local FIRST_VALUE = 9
if not deleteAll then
  for i = FIRST_OP + 1, #ARGV, 3 do fields[#fields + 1] = ARGV[i] end
end
local meta = redis.call('HMGET', P, unpack(fields))
local version, nKeys, nBytes, hBytes
if meta[1] then
  version, nKeys, nBytes, hBytes = tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3]), tonumber(meta[4] or '0')
else
  nKeys, nBytes = legacyCounts(P)
  version = nKeys > 0 and 1 or 0
  hBytes = 0
end

-- The session lock, judged by Redis's clock (the same for every instance of the service).
local session = meta[5]
local renewTo
if session then
  local clock = redisClockMs()
  local id, expires, ttl, owner = parseSession(session)
  if expires > clock then
    if sessionId == '' then return answer({ -5, version, owner, expires }) end
    if sessionId ~= id then return answer({ -6, version }) end
    renewTo = id .. '|' .. (clock + ttl) .. '|' .. ttl .. '|' .. owner
  elseif sessionId ~= '' then
    return answer({ -6, version })
  end
elseif sessionId ~= '' then
  return answer({ -6, version })
end

if ifVersion ~= '' and tonumber(ifVersion) ~= version then return answer({ -4, version }) end

-- First pass: what each op would write, and every refusal, before anything is written.
local changedKeys, previous, newEntries, results = {}, {}, {}, {}
-- A delete of everything reads the whole hash: the marks a point opened by the release before
-- keeps per key (\0r<key>), by key.
local marked = {}
local addedKeys, removedKeys, byteDelta, work = 0, 0, 0, 0

local function formatNumber(value)
  -- Lua would print 0.1 + 0.2 as 0.3; JSON needs the digits that read back as the same double.
  if value == math.floor(value) and math.abs(value) < 2^53 then return string.format('%.0f', value) end
  local text
  for precision = 15, 17 do
    text = string.format('%.' .. precision .. 'g', value)
    if tonumber(text) == value then break end
  end
  return text
end

if deleteAll then
  local all = redis.call('HGETALL', P)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == '\0r' then marked[string.sub(all[i], 3)] = all[i + 1] end
  end
  for i = 1, #all, 2 do
    local field = all[i]
    if string.byte(field, 1) ~= 0 then
      changedKeys[#changedKeys + 1] = field
      previous[#previous + 1] = all[i + 1]
      newEntries[#newEntries + 1] = false
      removedKeys = removedKeys + 1
      byteDelta = byteDelta - #field - #all[i + 1]
    end
    work = work + #field + #all[i + 1]
  end
  results[1] = tostring(removedKeys)
else
  local index = 0
  for i = FIRST_OP, #ARGV, 3 do
    local kind, field, arg = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    local old = meta[FIRST_VALUE + index]
    local entry = false
    if old then work = work + #old end
    if kind == 's' then
      entry = arg
      results[#results + 1] = now
    elseif kind == 'i' then
      local amount, default = string.match(arg, '^(%S+) (%S+)$')
      local base
      if old then
        local json = string.match(old, '^%[%d+,(.*)%]$')
        -- A JSON number only: tonumber alone would also take hex, spaces, "inf" and "nan".
        if not json or not string.match(json, '^%-?%d+%.?%d*[eE]?[%+%-]?%d*$') then
          return answer({ -1, version, index })
        end
        base = tonumber(json)
        if not base then return answer({ -1, version, index }) end
      else
        base = tonumber(default)
      end
      local value = base + tonumber(amount)
      if value ~= value or value == math.huge or value == -math.huge then return answer({ -2, version, index }) end
      local text = formatNumber(value)
      entry = '[' .. now .. ',' .. text .. ']'
      results[#results + 1] = text
    else
      results[#results + 1] = old and '1' or '0'
    end
    if entry or old then
      changedKeys[#changedKeys + 1] = field
      previous[#previous + 1] = old or false
      newEntries[#newEntries + 1] = entry
      if entry and not old then addedKeys = addedKeys + 1 end
      if old and not entry then removedKeys = removedKeys + 1 end
      byteDelta = byteDelta + (entry and (#field + #entry) or 0) - (old and (#field + #old) or 0)
    end
    index = index + 1
  end
  if addedKeys > 0 and nKeys + addedKeys - removedKeys > tonumber(maxKeys) then
    return answer({ -3, version, -1 })
  end
  if byteDelta > 0 and nBytes + byteDelta > tonumber(maxBytes) then
    return answer({ -7, version, nBytes + byteDelta })
  end
end

-- Second pass: write. Nothing below can fail.
local newVersion = version
local historyDelta = 0
local dropOldMeta = false
-- The marks of the release before (\0r<key>) that a point opened now leaves behind.
local oldMarks = {}
-- The newest message handed to the session by this write, if any.
local deliveredUpTo
-- Fields that mark the keys this write recorded in a point opened by the release before (and
-- the open point itself).
local recordedMarks = {}
local interval = tonumber(histInterval)
if #changedKeys > 0 then
  newVersion = version + 1
  if interval > 0 and tonumber(histMaxPoints) > 0 then
    -- The first write of the interval opens a point at the version before it; later writes
    -- record only the keys the point has no record of yet.
    local nowMs = tonumber(now)
    local openId, openVersion = parseOpenPoint(meta[6])
    local pointId = nowMs - nowMs % interval
    local point = { id = pointId, version = version, new = true }
    -- An instance whose clock is behind never opens a point older than the open one.
    if openId and pointId <= openId then point = { id = openId, version = openVersion, new = false } end
    local open = tostring(point.id)
    -- Which keys the open point has a record of (includes/restore-points.lua): the list in \0k
    -- or HM k, when it names the open point; else (a point opened by the release before) each
    -- key's mark.
    local listed, recorded
    if not point.new then
      local text = meta[8] or redis.call('HGET', HM, 'k')
      local sep = text and string.find(text, '\0', 1, true)
      if sep and string.sub(text, 1, sep - 1) == open then
        listed = string.sub(text, sep)
        recorded = function(k) return string.find(listed, '\0' .. changedKeys[k] .. '\0', 1, true) ~= nil end
      else
        local legacy = marked
        if not deleteAll then
          local names = {}
          for k = 1, #changedKeys do names[k] = '\0r' .. changedKeys[k] end
          local values = redis.call('HMGET', P, unpack(names))
          legacy = {}
          for k = 1, #changedKeys do legacy[changedKeys[k]] = values[k] end
        end
        recorded = function(k) return legacy[changedKeys[k]] == open end
      end
    end
    local records, recordedKeys = {}, {}
    for k = 1, #changedKeys do
      if point.new or not recorded(k) then
        records[#records + 1] = { changedKeys[k], previous[k] }
        recordedKeys[#recordedKeys + 1] = changedKeys[k]
      end
    end
    if #records > 0 then
      local hm = redis.call('HMGET', HM, 'x', 'k')
      local xText = hm[1]
      -- No index yet: the history is empty, or written before restore points (whose \0t the
      -- index replaces).
      if not xText then dropOldMeta = true end
      -- A point opened where the release before kept a mark per key: the marks go.
      if point.new and xText and not hm[2] and not meta[8] then
        for _, field in ipairs(redis.call('HKEYS', P)) do
          work = work + #field
          if #field > 2 and string.sub(field, 1, 2) == '\0r' then oldMarks[#oldMarks + 1] = field end
        end
      end
      local index, read = loadIndex(H, xText)
      local kind, who = string.match(ARGV[5], '^(%S+) (.*)$')
      local delta, copied = pushRecords(H, HC, index, point, records, { t = nowMs, k = kind, by = who }, {
        now = nowMs, fineMs = tonumber(histFineMs), hourlyMs = tonumber(histHourlyMs), maxPoints = tonumber(histMaxPoints),
        maxBytes = tonumber(histMaxBytes), maxAgeMs = tonumber(histMaxAgeMs),
      }, hBytes)
      historyDelta, work = delta, work + read + copied
      local added = table.concat(recordedKeys, '\0') .. '\0'
      if point.new or listed then
        -- The open point's keys: in the player hash while they fit in a compact hash's value
        -- (SMALL_LIST), else in HM k; never in both.
        local text = open .. (point.new and '\0' or listed) .. added
        if #text <= SMALL_LIST then
          recordedMarks[#recordedMarks + 1] = '\0k'
          recordedMarks[#recordedMarks + 1] = text
          redis.call('HSET', HM, 'x', cjson.encode(index))
          if hm[2] then redis.call('HDEL', HM, 'k') end
        else
          redis.call('HSET', HM, 'x', cjson.encode(index), 'k', text)
          if meta[8] then oldMarks[#oldMarks + 1] = '\0k' end
        end
        if point.new then
          recordedMarks[#recordedMarks + 1] = '\0r'
          recordedMarks[#recordedMarks + 1] = point.id .. '|' .. point.version
        end
      else
        redis.call('HSET', HM, 'x', cjson.encode(index))
        for _, key in ipairs(recordedKeys) do
          recordedMarks[#recordedMarks + 1] = '\0r' .. key
          recordedMarks[#recordedMarks + 1] = open
        end
      end
    end
  end
end

-- The player's messages: acknowledged ones removed, new ones handed to the holding session.
local inboxDelta, messagesJson = 0, ''
if ARGV[6] ~= '' then
  local parts = {}
  local acks = {}
  for id in string.gmatch(string.sub(ARGV[6], 2), '%S+') do acks[#acks + 1] = id end
  if #acks > 0 then
    local values = redis.call('HMGET', M, unpack(acks))
    local gone, removed = {}, {}
    for i = 1, #acks do
      local value = values[i]
      if value then
        gone[#gone + 1] = acks[i]
        local expires = string.match(value, '^%d+|(%d+)|')
        removed[#removed + 1] = '[' .. (#acks[i] + #value) .. ',' .. expires .. ']'
        inboxDelta = inboxDelta - #acks[i] - #value
      end
    end
    if #gone > 0 then redis.call('HDEL', M, unpack(gone)) end
    parts[#parts + 1] = '"a":[' .. table.concat(removed, ',') .. ']'
  end
  if string.sub(ARGV[6], 1, 1) == 'd' and renewTo then
    local delivered
    delivered, deliveredUpTo = handOver(M, redisClockMs(), meta[7] or '')
    if #delivered > 0 then parts[#parts + 1] = '"d":[' .. table.concat(delivered, ',') .. ']' end
  end
  if #parts > 0 then messagesJson = '{' .. table.concat(parts, ',') .. '}' end
end

local newKeys = nKeys + addedKeys - removedKeys
-- A write that changed nothing and holds no session leaves the hash as it was (a delete of
-- what a player never had creates nothing). Data and meta go in one HSET.
if #changedKeys > 0 or renewTo then
  local toSet = { '\0v', newVersion, '\0n', newKeys, '\0b', nBytes + byteDelta, '\0h', hBytes + historyDelta }
  for i = 1, #recordedMarks do toSet[#toSet + 1] = recordedMarks[i] end
  local toDelete = oldMarks
  if dropOldMeta then toDelete[#toDelete + 1] = '\0t' end
  for k = 1, #changedKeys do
    if newEntries[k] then
      toSet[#toSet + 1] = changedKeys[k]
      toSet[#toSet + 1] = newEntries[k]
    else
      toDelete[#toDelete + 1] = changedKeys[k]
    end
  end
  if renewTo and release ~= 'r' then
    toSet[#toSet + 1] = '\0s'
    toSet[#toSet + 1] = renewTo
    if deliveredUpTo then
      toSet[#toSet + 1] = '\0md'
      toSet[#toSet + 1] = deliveredUpTo
    end
  elseif renewTo then
    toDelete[#toDelete + 1] = '\0s'
    toDelete[#toDelete + 1] = '\0md'
  end
  if version == 0 and newVersion == 0 and release == 'r' then
    -- Still without data, released: gone, as a release through player-session.lua leaves it.
    redis.call('DEL', P)
  else
    if #toDelete > 0 then redis.call('HDEL', P, unpack(toDelete)) end
    redis.call('HSET', P, unpack(toSet))
  end
  if version == 0 then
    -- A player held before its first data counted as held (includes/session.lua) and expired
    -- with its lease: with data it is kept and counted as data; still without, its lease (and
    -- its count) moves with the renewal.
    if session then heldChange(session, -1) end
    if newVersion > 0 then
      redis.call('PERSIST', P)
    elseif release ~= 'r' then
      local _, until_ = parseSession(renewTo)
      redis.call('PEXPIREAT', P, until_ + 60000)
      heldChange(renewTo, 1)
    end
  end
end

local playersDelta = 0
if meta[1] or nKeys == 0 then
  if nKeys == 0 and newKeys > 0 then playersDelta = 1 elseif nKeys > 0 and newKeys == 0 then playersDelta = -1 end
end
local reply = { 3, newVersion, byteDelta, playersDelta, historyDelta, inboxDelta, work, messagesJson }
if #heldChanges > 0 then reply = { 4, newVersion, byteDelta, playersDelta, historyDelta, inboxDelta, work, messagesJson, table.concat(heldChanges, ' ') } end
for k = 1, #results do reply[#reply + 1] = results[k] end
return answer(reply)
