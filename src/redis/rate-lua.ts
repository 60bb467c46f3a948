/**
 * The Lua that the rate take scripts (`rate-scripts.ts`) and the key-management scripts
 * (`key-scripts.ts`) share: how each algorithm reads its key's state at `now`. Written once,
 * so a take and a peek or adjust can never disagree about a bucket. Every fragment reads the
 * key from a Lua local `key` and its parameters from locals set before it.
 *
 * @module
 */

/**
 * Sets `W`, the window in whole µs, from an argument in ms (fractions allowed), rounded down:
 * a window longer than asked would refuse a client at exactly the rate.
 */
export const windowUs = (arg: string): string => `
local W = math.floor(tonumber(${arg}) * 1000)
if W < 1 then W = 1 end`;

/**
 * GCRA's state at `now` (T, B, key in scope): the burst's span `tau` in µs and the
 * theoretical arrival time `tat`, never before `now` (a missing key is a full bucket).
 */
export const gcraRead = `
local tau = T * B
local tat = now
local stored = redis.call('GET', key)
if stored then
  local s = tonumber(stored)
  if s > now then tat = s end
end`;

/** The fixed window's state at `now` (W, key in scope): window `w` and its count `c`. */
export const fixedRead = `
local w = math.floor(now / W)
local c = 0
local stored = redis.call('HMGET', key, 'w', 'c')
if stored[1] and tonumber(stored[1]) == w then c = tonumber(stored[2]) or 0 end`;

/**
 * The sliding window's state at `now` (W, N, key in scope): the aligned window `w`, how far
 * `into` it, this window's count `cur`, the previous one's `prev`, the part of `prev` still
 * `counted`, and what is left, `avail`.
 */
export const slidingRead = `
local w = math.floor(now / W)
local into = now - w * W
if into < 0 then into = 0 end
local cur = 0
local prev = 0
local stored = redis.call('HMGET', key, 'w', 'c', 'p')
if stored[1] then
  local sw = tonumber(stored[1])
  if sw == w then
    cur = tonumber(stored[2]) or 0
    prev = tonumber(stored[3]) or 0
  elseif sw == w - 1 then
    prev = tonumber(stored[2]) or 0
  end
end
-- µs of the previous window still in the trailing one, a microsecond fewer: TIME truncates
local overlap = W - into - 1
if overlap < 0 then overlap = 0 end
local counted = math.ceil(prev * overlap / W - 1e-9) - 1
if counted < 0 then counted = 0 end
local avail = N - counted - cur
if avail < 0 then avail = 0 end
`;

/**
 * Sets `retry`: ms until `need` fits (need, N, W, into, cur and prev in scope; only when it
 * does not fit now, which makes the divisor non-zero).
 */
export const slidingRetry = `
  -- When need fits, x µs into a window: the previous window's share counts k requests
  -- or fewer once prev × (W - x - 1) / W <= k + 1
  local at
  if cur + need <= N then
    at = W - (N - need - cur + 1) * W / prev - 1
  else
    -- in the next window, where this window's count is the previous one
    local x = W - (N - need + 1) * W / cur - 1
    if x < 0 then x = 0 end
    at = W + x
  end
  retry = math.ceil((at - into) / 1000)
  if retry < 1 then retry = 1 end
`;

/** Sets `reset`: ms until neither window counts (cur, prev, W, into in scope). */
export const slidingReset = `
local reset = 0
if cur > 0 then
  reset = math.ceil((2 * W - into) / 1000)
elseif prev > 0 then
  reset = math.ceil((W - into) / 1000)
end
`;
