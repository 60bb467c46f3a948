/**
 * The rate scripts, one per algorithm the store runs: GCRA, fixed window and sliding window.
 * Each is a take script (see `redis-script.ts` for the shape, the time override and the
 * server-side expiry every one of them follows).
 *
 * @module
 */
import { nowUnlessExpired, redisScript } from './redis-script.js';

// The window in whole µs from ARGV[1] in ms (fractions allowed), rounded down: a window longer
// than asked would refuse a client at exactly the rate.
export const windowUs = `
local W = math.floor(tonumber(ARGV[1]) * 1000)
if W < 1 then W = 1 end`;

/**
 * The sliding window's state at `now` (W, N in scope): the aligned window `w`, how far `into`
 * it, this window's count `cur`, the previous one's `prev`, the part of `prev` still
 * `counted`, and what is left, `avail`. Shared by the take and key-management scripts.
 */
export const slidingRead = `
local w = math.floor(now / W)
local into = now - w * W
if into < 0 then into = 0 end
local cur = 0
local prev = 0
local stored = redis.call('HMGET', KEYS[1], 'w', 'c', 'p')
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

/**
 * GCRA (the token bucket with one number of state). KEYS: tat. ARGV: emission interval T in
 * µs (may be fractional), burst B, need, want, expiresAtUs, [nowUs]. The key holds the
 * theoretical arrival time (TAT, whole µs, rounded up so rounding never admits extra) and
 * expires when the bucket is full again; a missing key is a full bucket.
 * Reply: granted, remaining, retryAfterMs (-1 when granted, or never possible), resetAfterMs,
 * server now in µs.
 */
export const gcraScript = redisScript(
  'gcra',
  `
local T = tonumber(ARGV[1])
local B = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
${nowUnlessExpired(5)}
local tau = T * B
local tat = now
local stored = redis.call('GET', KEYS[1])
if stored then
  local s = tonumber(stored)
  if s > now then tat = s end
end
local avail = math.floor((tau - (tat - now)) / T + 1e-9)
if avail < 0 then avail = 0 end
local granted = 0
if avail >= need then
  granted = want
  if granted > avail then granted = avail end
end
local newtat = tat
local retry = -1
if granted > 0 then
  newtat = math.ceil(tat + granted * T)
  local px = math.ceil((newtat - now) / 1000)
  if px < 1 then px = 1 end
  redis.call('SET', KEYS[1], string.format('%.0f', newtat), 'PX', px)
elseif need * T <= tau then
  retry = math.ceil((tat + need * T - tau - now) / 1000)
  if retry < 1 then retry = 1 end
end
local remaining = math.floor((tau - (newtat - now)) / T + 1e-9)
if remaining < 0 then remaining = 0 end
local reset = math.ceil((newtat - now) / 1000)
if reset < 0 then reset = 0 end
return {granted, remaining, retry, reset, now}
`,
  true,
);

/**
 * Fixed window aligned on Redis time: window w = floor(nowUs / W), W in whole µs. KEYS: hash
 * {w, c}. ARGV: window in ms (may be fractional), limit N, need, want, expiresAtUs, [nowUs].
 * Exactly N grants per window when demand is there; refusals do not count.
 * Reply: granted, remaining, retryAfterMs (-1 when granted, or never possible), resetAfterMs
 * (to the window's end), window index, server now in µs.
 */
export const fixedWindowScript = redisScript(
  'fixed-window',
  `${windowUs}
local N = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
${nowUnlessExpired(5)}
local w = math.floor(now / W)
local c = 0
local stored = redis.call('HMGET', KEYS[1], 'w', 'c')
if stored[1] and tonumber(stored[1]) == w then c = tonumber(stored[2]) or 0 end
local avail = N - c
if avail < 0 then avail = 0 end
local granted = 0
if avail >= need then
  granted = want
  if granted > avail then granted = avail end
end
local reset = math.ceil(((w + 1) * W - now) / 1000)
local retry = -1
if granted > 0 then
  redis.call('HSET', KEYS[1], 'w', string.format('%.0f', w), 'c', c + granted)
  redis.call('PEXPIRE', KEYS[1], reset + 1000)
elseif need <= N then
  retry = reset
end
return {granted, avail - granted, retry, reset, w, now}
`,
  true,
);

/**
 * Sliding-window counter: the current aligned window's count plus the previous one's, taken
 * as spread evenly over it and counted for the part that still overlaps the trailing window.
 * KEYS: hash {w, c, p}. ARGV: window in ms (may be fractional), limit N, need, want,
 * expiresAtUs, [nowUs]. Stores two counts, never a log.
 *
 * The previous window's share is counted in whole requests: the fewest that evenly spread
 * requests could still have in the trailing window, ceil(p × (W − into) / W) − 1, at least 0,
 * taken at the end of the microsecond `TIME` reports. Rounded the other way (or not at all),
 * a client whose requests reach Redis exactly W / N apart is refused in every window after a
 * full one, though it never has N requests in any window; counted this way, requests at least
 * W / N apart are never refused, at any phase. What it admits: at most N in any aligned
 * window, and the weighted estimate p × (W − into) / W + c never above N + 1.
 * Reply: granted, remaining, retryAfterMs (-1 when granted, or never possible), resetAfterMs
 * (until both windows stop counting), window index, server now in µs.
 */
export const slidingWindowScript = redisScript(
  'sliding-window',
  `${windowUs}
local N = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
${nowUnlessExpired(5)}
${slidingRead}
local granted = 0
if avail >= need then
  granted = want
  if granted > avail then granted = avail end
end
local retry = -1
if granted > 0 then
  cur = cur + granted
  redis.call('HSET', KEYS[1], 'w', string.format('%.0f', w), 'c', cur, 'p', prev)
  redis.call('PEXPIRE', KEYS[1], math.ceil((2 * W - into) / 1000) + 1000)
elseif need <= N then
${slidingRetry}
end
${slidingReset}
return {granted, avail - granted, retry, reset, w, now}
`,
  true,
);
