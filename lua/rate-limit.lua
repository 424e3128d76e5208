--[[
  Take requests from a workspace's fixed-window budget for one instance of the service: a
  lease. The instance answers that many requests without asking Redis again, so the budget is
  shared by every instance and never exceeded, and most requests need no limiter call at all.

  The window starts with the first request and lasts as long as the counter's TTL (Redis's
  clock). `need` is what the instance has waiting right now; `extra` is what it asks for ahead
  of time. Extras come only out of plenty: at most a quarter of what would be left after the
  need, so near the limit every request is counted as it comes and no instance sits on budget
  another one could use. A counter that lost its TTL (it should not happen) is repaired rather
  than left to block the workspace for ever.

  `charged` are requests the instance already answered without Redis while this counter's
  master did not answer (store/workspaces/rate-limiter.ts, the failover fallback): they are
  added to the count whatever the limit, before anything is granted, so every instance's
  fallback is counted and the window grants nothing more once they reach the limit.

  Input:
    KEYS[1] window counter of the workspace
    ARGV[1] requests allowed per window
    ARGV[2] window length, milliseconds
    ARGV[3] need: requests waiting now (>= 1)
    ARGV[4] extra: requests wanted ahead of time (>= 0)
    ARGV[5] charged: requests already answered, to count whatever the limit (>= 0; optional)

  Output:
    { granted, count, ttl }  requests granted to the caller (0 when the window's budget is
                             spent), requests counted in this window so far (these and the
                             charged included), and the milliseconds until the window resets
]]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local existing = redis.call('GET', KEYS[1])
local count = tonumber(existing or '0')
local charged = tonumber(ARGV[5] or '0')
if charged > 0 then
  count = redis.call('INCRBY', KEYS[1], charged)
end
local granted = 0
if count < limit then
  local left = limit - count
  granted = math.min(tonumber(ARGV[3]), left)
  granted = granted + math.min(tonumber(ARGV[4]), math.floor((left - granted) / 4))
  count = redis.call('INCRBY', KEYS[1], granted)
end

local ttl
if not existing and granted + charged > 0 then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
else
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], window)
    ttl = window
  end
end

return { granted, count, ttl }
