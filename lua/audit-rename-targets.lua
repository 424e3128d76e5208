--[[
  Rename the targets of a page of audit entries: an erased player's earlier entries (support
  staff read it, wrote it, restored it) named it by its user id, and now name it by the user's
  digest. A page at a time so no call holds Redis for long; the caller walks from the head
  (newest) to the tail, so entries pushed meanwhile only move pages ahead and none is skipped.
  Entries are matched by their exact `"target":"<target>"` member, never parsed.

  Input:
    KEYS[1] the audit list (JSON entries, newest first)
    ARGV[1] index of the page's first entry
    ARGV[2] entries in the page
    ARGV[3..] pairs: a target to rename, its new name

  Output:
    { renamed, listLength }
]]
local L = KEYS[1]
local start = tonumber(ARGV[1])
local entries = redis.call('LRANGE', L, start, start + tonumber(ARGV[2]) - 1)
local renamed = 0
for i, entry in ipairs(entries) do
  local changed = entry
  for j = 3, #ARGV, 2 do
    local from = '"target":"' .. ARGV[j] .. '"'
    local at = string.find(changed, from, 1, true)
    if at then
      changed = string.sub(changed, 1, at - 1) .. '"target":"' .. ARGV[j + 1] .. '"' .. string.sub(changed, at + #from)
    end
  end
  if changed ~= entry then
    redis.call('LSET', L, start + i - 1, changed)
    renamed = renamed + 1
  end
end
return { renamed, redis.call('LLEN', L) }
