--[[
  Included (--- @include) by the scripts that keep the first answer of a request under its
  Idempotency-Key, in the same atomic step as the work it answers: write-player.lua,
  player-session.lua.

  Expects these locals of the including script, set before the include:
    I        the idempotency record's key (read and written only when idemFp is not '')
    idemFp   the request's fingerprint, or '' for a request without a key
    idemTtl  seconds the record is kept

  Returns from the script, before anything is written:
    { 2, '<the first answer, as JSON>' }  the record holds this request's first answer (replay)
    { -8 }                                 the record holds another request's: IDEMPOTENCY_KEY_REUSED
  Defines answer(reply): keeps reply under the key (when there is one) and returns it.
]]
if idemFp ~= '' then
  local kept = redis.call('GET', I)
  if kept then
    local nl = string.find(kept, '\n', 1, true)
    if string.sub(kept, 1, nl - 1) ~= idemFp then return { -8 } end
    return { 2, string.sub(kept, nl + 1) }
  end
end

local function answer(reply)
  if idemFp ~= '' then
    redis.call('SET', I, idemFp .. '\n' .. cjson.encode(reply), 'EX', idemTtl)
  end
  return reply
end
