--[[
  Add one instance's counts to a workspace's usage for a UTC day. Instances count requests in
  memory and add them here every few seconds, so usage costs no Redis call per request.

  Input:
    KEYS[1] usage hash of the workspace for the day
    ARGV[1] requests answered (429s included)
    ARGV[2] of which 429s
    ARGV[3] how long a day's usage hash is kept, seconds

  Output:
    the day's request count after the addition
]]
local requests = redis.call('HINCRBY', KEYS[1], 'requests', ARGV[1])
if tonumber(ARGV[2]) > 0 then
  redis.call('HINCRBY', KEYS[1], 'limited', ARGV[2])
end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return requests
