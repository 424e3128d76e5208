--[[
  Rename exact JSON members in a page of audit entries: an erased player's earlier entries named
  it by its user id (a support action's `"target":"player:<ws>/<id>"`, a board entry removal's
  `"userId":"<id>"`), and now name it by the user's digest. A page at a time so no call holds
  Redis for long; the caller walks from the head (newest) to the tail, so entries pushed
  meanwhile only move pages ahead and none is skipped. Entries are matched by exact text (user
  and workspace ids hold no quote or backslash), never parsed.

  Input:
    KEYS[1] the audit list (JSON entries, newest first)
    ARGV[1] index of the page's first entry
    ARGV[2] entries in the page
    ARGV[3..] triples: a text the entry must hold for the rename to apply ('' for any entry,
              e.g. `"workspaceId":"<ws>"`), the member to rename (every occurrence), its new text

  Output:
    { renamed (entries changed), listLength }
]]
local L = KEYS[1]
local start = tonumber(ARGV[1])
local entries = redis.call('LRANGE', L, start, start + tonumber(ARGV[2]) - 1)
local renamed = 0
for i, entry in ipairs(entries) do
  local changed = entry
  for j = 3, #ARGV, 3 do
    local within, from, to = ARGV[j], ARGV[j + 1], ARGV[j + 2]
    if within == '' or string.find(entry, within, 1, true) then
      local at = string.find(changed, from, 1, true)
      while at do
        changed = string.sub(changed, 1, at - 1) .. to .. string.sub(changed, at + #from)
        at = string.find(changed, from, at + #to, true)
      end
    end
  end
  if changed ~= entry then
    redis.call('LSET', L, start + i - 1, changed)
    renamed = renamed + 1
  end
end
return { renamed, redis.call('LLEN', L) }
