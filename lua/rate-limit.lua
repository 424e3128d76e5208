--[[
  Count one request against a workspace's fixed window, and record it in the day's usage.
  The window starts with the first request and lasts as long as the counter's TTL, so every
  instance of the service shares one budget and one clock (Redis's). A counter that lost its
  TTL (it should not happen) is repaired rather than left to block the workspace forever.

  Input:
    KEYS[1] window counter of the workspace
    KEYS[2] usage hash of the workspace for the current UTC day
    ARGV[1] requests allowed per window
    ARGV[2] window length, milliseconds
    ARGV[3] how long a day's usage hash is kept, seconds

  Output:
    { count, ttl }  requests counted in this window so far (this one included), and the
                    milliseconds until the window resets. The request is allowed when
                    count <= ARGV[1].
]]
local count = redis.call('INCR', KEYS[1])
local ttl
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
else
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
end

if redis.call('HINCRBY', KEYS[2], 'requests', 1) == 1 then
  redis.call('EXPIRE', KEYS[2], ARGV[3])
end
if count > tonumber(ARGV[1]) then
  redis.call('HINCRBY', KEYS[2], 'limited', 1)
end

return { count, ttl }
