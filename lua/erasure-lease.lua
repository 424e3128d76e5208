--[[
  Renew or release the lease of the worker that runs an erasure job, only while that worker
  still holds it: a worker that was paused past its lease (and replaced) must not take the
  job back from its successor, nor free it under it.

  Input:
    KEYS[1] the job's lease (a string: the holder)
    ARGV[1] the holder
    ARGV[2] 'renew' or 'release'
    ARGV[3] the lease's length, ms (renew)

  Output:
    1 renewed or released; 0 the lease is not this holder's
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'release' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
