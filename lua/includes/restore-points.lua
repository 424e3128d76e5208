--[[
  Included (--- @include) by write-player.lua: a player's history kept as restore points
  (docs/history.md). A restore point is the player's data as it was at the start of an interval
  (HISTORY_INTERVAL_SECONDS) in which it was written: the first write of each key in the
  interval records what it replaces; later writes of the same key in the same interval record
  nothing.

  Storage, all in the player's slot:
    \0r (player hash)  the open point: `<id>|<version>`; id = the interval's start (ms),
                       version = the player's version at that start.
    H  (list)          the fine points, newest first: every point of the last
                       HISTORY_FINE_HOURS, one or more elements each (a key first changed later
                       in the interval adds an element). Elements written before restore points
                       existed (one per write) are points of their own.
    HC (list)          the coarse points, newest first, one element each: older points thinned
                       to the first of each UTC hour, the later ones of the hour merged into it;
                       past HISTORY_HOURLY_HOURS (its old tail), to the first of each UTC day.
    HM x (hash field)  the index of both lists, newest first: `{"f":[[id,version,elements,bytes],
                       ...],"c":[...]}`, so that thinning and trimming never read a point to
                       learn its size or its day.
    \0k (player hash)  the keys recorded in the open point: `<id>\0<key>\0<key>\0...` (id: the
    or HM k            open point's; a key holds no control character, so \0 cannot be in one),
                       in the player hash while it is at most 64 bytes, else in HM k (never
                       both). A key listed has its record; any other is recorded by its next
                       change. Rewritten by the write that opens a point, added to by a later
                       write that records a key; a repeat write reads \0k in its own HMGET (HM k
                       with one HGET more when \0k is absent) and compares.
  The index, and a longer list of keys, are in a key of their own, read only when a point is
  written or a key's record is looked up there: they are often longer than the 64 bytes a small
  hash keeps each value within (hash-max-listpack-value), and a player hash holding them would
  lose its compact encoding. The player hash keeps the history's byte count (\0h), which the
  storage totals read.
  The release before kept a mark per key in the player hash instead (\0r<key>, the id of the
  point the key was last recorded in): a point it opened is still read through those marks
  (write-player.lua), and the next point opened deletes them; the history sweep deletes either
  form when a history leaves.
  An element: a JSON header line `{"i":id,"v":version,"t":ms,"k":kind,"by":who,"keys":[...],
  "lens":[...]}`, then the recorded stored entries back to back (lens: their byte lengths, -1
  for a key that did not exist). Within a point the oldest record of a key wins.

  Defines:
    parseOpenPoint(text)         id, version of \0r, or nil
    loadIndex(H, xText)          the index (decoded HM x; built once from an older H), and the
                                 bytes it read to build it
    pushRecords(...)             adds records to the open point, then thins and trims (below)
    thin(...), thinDaily(...)    move fine points to the coarse list, one an hour, and merge the
                                 coarse list's old tail to one a day (history-sweep.lua too)
    trim(...)                    drops points by count, bytes and age (history-sweep.lua too)
]]
local HOUR_MS = 3600000
local DAY_MS = 86400000

local function parseOpenPoint(text)
  if not text then return nil end
  local id, version = string.match(text, '^(%d+)|(%d+)$')
  return tonumber(id), tonumber(version)
end

-- An element's header (older elements: v was the version their write made, the point is v - 1,
-- and their id is their time) and its records { key, stored entry or false }.
local function parseElement(element)
  local nl = string.find(element, '\n', 1, true)
  local h = cjson.decode(string.sub(element, 1, nl - 1))
  if h.i == nil then
    h.i = h.t
    h.v = h.v - 1
  end
  local records, at = {}, nl + 1
  for j = 1, #h.keys do
    local len = h.lens[j]
    if len < 0 then
      records[j] = { h.keys[j], false }
    else
      records[j] = { h.keys[j], string.sub(element, at, at + len - 1) }
      at = at + len
    end
  end
  return h, records
end

local function buildElement(h, records)
  local keys, lens, parts = {}, {}, {}
  for j, record in ipairs(records) do
    keys[j] = record[1]
    if record[2] then
      lens[j] = #record[2]
      parts[#parts + 1] = record[2]
    else
      lens[j] = -1
    end
  end
  return cjson.encode({ i = h.i, v = h.v, t = h.t, k = h.k, by = h.by, keys = keys, lens = lens }) .. '\n' .. table.concat(parts)
end

local function loadIndex(H, xText)
  if xText then return cjson.decode(xText), 0 end
  local index, read = { f = {}, c = {} }, 0
  for _, element in ipairs(redis.call('LRANGE', H, 0, -1)) do
    local nl = string.find(element, '\n', 1, true)
    local h = cjson.decode(string.sub(element, 1, nl - 1))
    local id, version = h.i, h.v
    if id == nil then id, version = h.t, h.v - 1 end
    index.f[#index.f + 1] = { id, version, 1, #element }
    read = read + #element
  end
  return index, read
end

-- One element out of elements given oldest first: each key's oldest record, the oldest header.
local function consolidate(elements)
  local header, records, seen = nil, {}, {}
  for _, element in ipairs(elements) do
    local h, recs = parseElement(element)
    header = header or h
    for _, record in ipairs(recs) do
      if not seen[record[1]] then
        seen[record[1]] = true
        records[#records + 1] = record
      end
    end
  end
  return buildElement(header, records)
end

-- Moves the fine points older than cutoff (never the newest) to the coarse list, merging each
-- into the coarse head when both fall in the same UTC hour. Answers the change in bytes and the
-- bytes read and written.
local function thin(index, H, HC, cutoff)
  local delta, work = 0, 0
  while #index.f > 1 and index.f[#index.f][1] < cutoff do
    local point = table.remove(index.f)
    -- RPOP with a count answers the tail first: the point's oldest element first.
    local elements = redis.call('RPOP', H, point[3])
    local head = index.c[1]
    local merged
    if head and math.floor(head[1] / HOUR_MS) == math.floor(point[1] / HOUR_MS) then
      local older = redis.call('LPOP', HC)
      table.insert(elements, 1, older)
      merged = consolidate(elements)
      delta = delta + #merged - point[4] - head[4]
      work = work + head[4]
      head[4] = #merged
    else
      merged = consolidate(elements)
      table.insert(index.c, 1, { point[1], point[2], 1, #merged })
      delta = delta + #merged - point[4]
    end
    redis.call('LPUSH', HC, merged)
    work = work + point[4] + #merged
  end
  return delta, work
end

-- Merges the coarse points older than cutoff (the coarse list's old tail) to the first of each
-- UTC day, as thin() merges an hour's. The index alone tells whether two of them share a day;
-- only then is the list read, from its oldest point up to the youngest of such a pair: popped,
-- consolidated per day, pushed back. Answers the change in bytes and the bytes read and written.
local function thinDaily(index, HC, cutoff)
  local c = index.c
  -- The youngest pair (c is newest first) of points past cutoff that share a day.
  local from
  for k = #c - 1, 1, -1 do
    if c[k][1] >= cutoff then break end
    if math.floor(c[k][1] / DAY_MS) == math.floor(c[k + 1][1] / DAY_MS) then from = k end
  end
  if not from then return 0, 0 end
  local count = 0
  for k = from, #c do count = count + c[k][3] end
  -- RPOP with a count answers the tail first: the oldest point's elements first.
  local popped = redis.call('RPOP', HC, count)
  local delta, work = 0, 0
  local out, entries = {}, {}
  local at, k = 1, #c
  while k >= from do
    local first = c[k]
    local day = math.floor(first[1] / DAY_MS)
    local group, bytes = {}, 0
    -- Every point of that day in the tail, oldest first, with each of its elements.
    while k >= from and math.floor(c[k][1] / DAY_MS) == day do
      for _ = 1, c[k][3] do
        group[#group + 1] = popped[at]
        at = at + 1
      end
      bytes = bytes + c[k][4]
      k = k - 1
    end
    if #group > 1 then
      local merged = consolidate(group)
      out[#out + 1] = merged
      entries[#entries + 1] = { first[1], first[2], 1, #merged }
      delta = delta + #merged - bytes
      work = work + bytes + #merged
    else
      out[#out + 1] = group[1]
      entries[#entries + 1] = first
      work = work + 2 * bytes
    end
  end
  -- Back in place, youngest first (RPUSH appends its arguments in order), and the index with them.
  for _ = from, #c do table.remove(c) end
  local push = {}
  for j = #out, 1, -1 do
    push[#push + 1] = out[j]
    c[#c + 1] = entries[j]
  end
  redis.call('RPUSH', HC, unpack(push))
  return delta, work
end

-- Drops whole points, oldest first, while there are more than maxPoints or more than maxBytes
-- (hBytes: the history's bytes now), the newest point staying whatever its size; and every point
-- older than oldestAllowed, the newest included, except keepId (the point a write has just
-- recorded into, which \0r names: lua/history-sweep.lua drops it once it ages). Nothing
-- is read: the index knows each point's elements and bytes. Answers the bytes dropped.
local function trim(index, H, HC, hBytes, maxPoints, maxBytes, oldestAllowed, keepId)
  local dropped = 0
  while #index.f + #index.c > 0 do
    local list, points = HC, index.c
    if #points == 0 then list, points = H, index.f end
    local oldest = points[#points]
    local total = #index.f + #index.c
    local aged = oldest[1] < oldestAllowed and oldest[1] ~= keepId
    if not (aged or (total > 1 and (total > maxPoints or hBytes - dropped > maxBytes))) then break end
    table.remove(points)
    redis.call('LTRIM', list, 0, -oldest[3] - 1)
    dropped = dropped + oldest[4]
  end
  return dropped
end

--[[
  pushRecords(H, HC, index, point, records, header, limits, hBytes): adds one element holding
  records to the point (a new one when point.new), then thins (on a new point) and trims.
  point = { id, version, new }; header = { t, k, by }; limits = { fineMs, hourlyMs, maxPoints,
  maxBytes, maxAgeMs, now }; hBytes: the history's bytes before. Answers the change in the history's
  bytes, and the bytes read and written.
]]
local function pushRecords(H, HC, index, point, records, header, limits, hBytes)
  local element = buildElement({ i = point.id, v = point.version, t = header.t, k = header.k, by = header.by }, records)
  redis.call('LPUSH', H, element)
  local delta, work = #element, #element
  local head = index.f[1]
  if point.new or head == nil or head[1] ~= point.id then
    table.insert(index.f, 1, { point.id, point.version, 1, #element })
  else
    head[3] = head[3] + 1
    head[4] = head[4] + #element
  end
  if point.new then
    local thinned, thinWork = thin(index, H, HC, limits.now - limits.fineMs)
    delta, work = delta + thinned, work + thinWork
    thinned, thinWork = thinDaily(index, HC, limits.now - limits.hourlyMs)
    delta, work = delta + thinned, work + thinWork
  end
  delta = delta - trim(index, H, HC, hBytes + delta, limits.maxPoints, limits.maxBytes, limits.now - limits.maxAgeMs, point.id)
  return delta, work
end
