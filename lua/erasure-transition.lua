--[[
  Move an erasure job to its next state, with the counts and the stream in step:
    done      erased: the user id is dropped from the job, which expires after the retention;
              its stream entry is acknowledged and deleted
    failed    the attempt failed: the entry stays pending in the stream, so a worker takes it
              again once it has been idle ERASURE_CLAIM_IDLE_MS
    unmapped  erased where it could be; a game of the request is served by no workspace: the
              entry leaves the stream, the job waits in the unmapped set (user id kept)
    requeue   an unmapped or failed job goes back to pending with a new stream entry (a game was
              mapped, or an operator asks for a retry now)
  A done job never changes again. The lease is released when the caller holds it.

  Input:
    KEYS[1] the job hash
    KEYS[2] the jobs stream
    KEYS[3] the counts hash
    KEYS[4] the unmapped set (sorted by request time)
    KEYS[5] the job's lease
    ARGV[1] the transition: 'done', 'failed', 'unmapped' or 'requeue'
    ARGV[2] the stream's consumer group
    ARGV[3] the lease holder ('' for none)
    ARGV[4] how long a done job is kept, ms
    ARGV[5..] fields to set on the job: name, value, ...

  Output:
    1  moved
    0  not moved: the job is done already, does not exist, or (requeue) is not unmapped or failed
]]
local J, S, C, U, LEASE = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local to, group, holder = ARGV[1], ARGV[2], ARGV[3]

local function release()
  if holder ~= '' and redis.call('GET', LEASE) == holder then redis.call('DEL', LEASE) end
end

local from = redis.call('HGET', J, 'state')
if not from or from == 'done' or (to == 'requeue' and from ~= 'unmapped' and from ~= 'failed') then
  release()
  return 0
end
local entry = redis.call('HGET', J, 'entry')
local jobId = redis.call('HGET', J, 'id')
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
if #fields > 0 then redis.call('HSET', J, unpack(fields)) end

local state = to
if to == 'requeue' then
  state = 'pending'
  if from == 'failed' then
    -- Its entry is still pending: delete it, so only the new one is worked on.
    redis.call('XACK', S, group, entry)
    redis.call('XDEL', S, entry)
  end
  redis.call('HSET', J, 'entry', redis.call('XADD', S, '*', 'job', jobId), 'nextAttemptAt', '0')
  redis.call('ZREM', U, jobId)
elseif to == 'done' or to == 'unmapped' then
  redis.call('XACK', S, group, entry)
  redis.call('XDEL', S, entry)
  if to == 'done' then
    redis.call('HDEL', J, 'userId')
    redis.call('PEXPIRE', J, ARGV[4])
    redis.call('ZREM', U, jobId)
    redis.call('HINCRBY', C, 'done', 1)
  else
    redis.call('ZADD', U, redis.call('HGET', J, 'requestedAtMs') or 0, jobId)
  end
end
redis.call('HSET', J, 'state', state)
if state ~= from then
  redis.call('HINCRBY', C, from, -1)
  if state ~= 'done' then redis.call('HINCRBY', C, state, 1) end
end
release()
return 1
