--[[
  Registers a leaderboard in its workspace's registry, within the workspace's most boards, and
  optionally changes one field of its config, in one step in the workspace's slot. A board is
  registered by its first write (with the default config) or by an operator's change.

  Input:
    KEYS[1] the workspace's board registry (hash: board -> config JSON)
    ARGV[1] board name
    ARGV[2] most boards a workspace may have
    ARGV[3] the config of a new board, as JSON
    ARGV[4] a field of the config to set, or '' to leave the config as it is
    ARGV[5] the field's new value, as JSON ('null' removes the field)

  Output:
    { 1, config }  the board's config (JSON) as it is now: it was registered already
    { 2, config }  registered now
    { -1, count }  TOO_MANY_BOARDS: the workspace has `count` boards, the most it may have
]]
local R = KEYS[1]
local board, maxBoards, initial, field, value = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]

local status = 1
local config = redis.call('HGET', R, board)
if not config then
  local count = redis.call('HLEN', R)
  if count >= maxBoards then return { -1, count } end
  config, status = initial, 2
end
if field ~= '' then
  local decoded = cjson.decode(config)
  decoded[field] = cjson.decode(value)
  if value == 'null' then decoded[field] = nil end
  config = cjson.encode(decoded)
end
if status == 2 or field ~= '' then redis.call('HSET', R, board, config) end
return { status, config }
