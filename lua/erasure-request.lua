--[[
  Record an erasure job: its hash, its entry in the stream that every instance's worker reads,
  its place in the listing, and the counts, in one step. A webhook notification is recorded
  once: its id marks the job made for it, and a repeat answers that job and records nothing.

  Input:
    KEYS[1] the job hash
    KEYS[2] the jobs stream
    KEYS[3] the jobs' listing (sorted set by request time)
    KEYS[4] the counts hash (requested, pending, ...)
    KEYS[5] the notification's marker (read and written only when ARGV[3] is not empty)
    ARGV[1] the job id
    ARGV[2] now, ms since the epoch
    ARGV[3] how long the notification's marker is kept, ms; '' when the job is no notification's
    ARGV[4] how long a job stays listed, ms (older ids are dropped from the listing)
    ARGV[5..] the job's fields: name, value, ... (state and entry are set here)

  Output:
    { 1, jobId }          recorded
    { 0, existingJobId }  a notification seen before: nothing recorded
]]
local J, S, L, C, N = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local jobId, now = ARGV[1], tonumber(ARGV[2])
if ARGV[3] ~= '' then
  local seen = redis.call('GET', N)
  if seen then return { 0, seen } end
  redis.call('SET', N, jobId, 'PX', ARGV[3])
end
local entry = redis.call('XADD', S, '*', 'job', jobId)
local fields = { 'state', 'pending', 'entry', entry }
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('HSET', J, unpack(fields))
redis.call('ZADD', L, now, jobId)
redis.call('ZREMRANGEBYSCORE', L, '-inf', now - tonumber(ARGV[4]))
redis.call('HINCRBY', C, 'requested', 1)
redis.call('HINCRBY', C, 'pending', 1)
return { 1, jobId }
