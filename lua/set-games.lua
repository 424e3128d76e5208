--[[
  Make a workspace serve exactly the given games (the platform's universe ids), for the
  webhook's erasure requests: games it served and no longer lists are unmapped, the new ones
  mapped. A game served by another workspace is refused, and then nothing is written.

  Input:
    KEYS[1] the games hash (game id -> workspace id)
    ARGV[1] the workspace id
    ARGV[2..] the game ids (none: the workspace serves no game)

  Output:
    { 1, removed, added }            written
    { 0, gameId, otherWorkspaceId }  refused: that game is served by another workspace
]]
local G, ws = KEYS[1], ARGV[1]
local wanted = {}
for i = 2, #ARGV do
  local owner = redis.call('HGET', G, ARGV[i])
  if owner and owner ~= ws then return { 0, ARGV[i], owner } end
  wanted[ARGV[i]] = true
end
local all = redis.call('HGETALL', G)
local removed, added = 0, 0
for i = 1, #all, 2 do
  if all[i + 1] == ws and not wanted[all[i]] then
    redis.call('HDEL', G, all[i])
    removed = removed + 1
  end
end
for i = 2, #ARGV do
  added = added + redis.call('HSET', G, ARGV[i], ws)
end
return { 1, removed, added }
