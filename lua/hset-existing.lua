--[[
  Update fields of a hash only if the hash exists, so that an update racing a deletion (a
  rename or a revocation while the workspace is being deleted) cannot bring back a partial
  record.

  Input:
    KEYS[1] the hash (a workspace record or an API key record)
    ARGV[1], ARGV[2], ...  pairs of field and value

  Output:
    1 when the fields were written, 0 when the hash does not exist
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
