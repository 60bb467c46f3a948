/**
 * Key-management scripts for the Redis store's quotas: read a key's bucket, add or take
 * tokens (a reward or a penalty), forget the key. One script per algorithm reads and adjusts
 * (an adjustment of 0 only reads); each is a take script in shape (see `redis-script.ts`): it
 * carries the server-side expiry, so a call the store gave up on changes nothing, and its
 * reply ends with Redis's now. Each reads its key's state with the Lua its take reads it with
 * (`rate-lua.ts`).
 *
 * Every adjust reply: remaining (whole tokens, ≥ 0), retryAfterMs (0 when one is there now),
 * resetAfterMs (0 when full), server now in µs.
 *
 * @module
 */
import { nowUnlessExpired, redisScript } from './redis-script.js';
import {
  fixedRead,
  gcraRead,
  slidingRead,
  slidingReset,
  slidingRetry,
  windowUs,
} from './rate-lua.js';

/**
 * GCRA. KEYS: tat. ARGV: emission interval T in µs, burst B, tokens to add (negative: a
 * penalty; 0: read only), expiresAtUs, [nowUs]. A reward never fills past the burst (the key
 * goes); a penalty moves the TAT on, past `now + τ` when it leaves a debt.
 */
export const gcraAdjustScript = redisScript(
  'gcra-adjust',
  `
local key = KEYS[1]
local T = tonumber(ARGV[1])
local B = tonumber(ARGV[2])
local delta = tonumber(ARGV[3])
${nowUnlessExpired(4)}
${gcraRead}
if delta ~= 0 then
  local newtat = math.ceil(tat - delta * T)
  if newtat <= now then
    redis.call('DEL', key)
    tat = now
  else
    redis.call('SET', key, string.format('%.0f', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
    tat = newtat
  end
end
local debt = tat - now
local tokens = (tau - debt) / T
local remaining = math.floor(tokens + 1e-9)
if remaining < 0 then remaining = 0 end
local retry = 0
if tokens + 1e-9 < 1 then
  retry = math.ceil((debt + T - tau) / 1000)
  if retry < 1 then retry = 1 end
end
return {remaining, retry, math.ceil(debt / 1000), now}
`,
  true,
);

/**
 * Fixed window. KEYS: hash {w, c}. ARGV: window in ms, limit N, tokens to add (a reward
 * lowers this window's count, never below 0; a penalty raises it, past N when it leaves a
 * debt, which ends with the window), expiresAtUs, [nowUs].
 */
export const fixedWindowAdjustScript = redisScript(
  'fixed-window-adjust',
  `
local key = KEYS[1]
${windowUs('ARGV[1]')}
local N = tonumber(ARGV[2])
local delta = tonumber(ARGV[3])
${nowUnlessExpired(4)}
${fixedRead}
local reset = math.ceil(((w + 1) * W - now) / 1000)
if delta ~= 0 then
  c = c - delta
  if c < 0 then c = 0 end
  if c == 0 then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'w', string.format('%.0f', w), 'c', c)
    redis.call('PEXPIRE', key, reset + 1000)
  end
end
local remaining = N - c
if remaining < 0 then remaining = 0 end
local retry = 0
if remaining < 1 then
  retry = reset
  if retry < 1 then retry = 1 end
end
if c == 0 then reset = 0 end
return {remaining, retry, reset, now}
`,
  true,
);

/**
 * Sliding window. KEYS: hash {w, c, p}. ARGV: window in ms, limit N, tokens to add (applied
 * to this window's count only: a reward cannot take back what the previous window still
 * counts), expiresAtUs, [nowUs].
 */
export const slidingWindowAdjustScript = redisScript(
  'sliding-window-adjust',
  `
local key = KEYS[1]
${windowUs('ARGV[1]')}
local N = tonumber(ARGV[2])
local delta = tonumber(ARGV[3])
${nowUnlessExpired(4)}
${slidingRead}
if delta ~= 0 then
  cur = cur - delta
  if cur < 0 then cur = 0 end
  if cur == 0 and prev == 0 then
    redis.call('DEL', key)
  else
    redis.call('HSET', key, 'w', string.format('%.0f', w), 'c', cur, 'p', prev)
    redis.call('PEXPIRE', key, math.ceil((2 * W - into) / 1000) + 1000)
  end
  avail = N - counted - cur
  if avail < 0 then avail = 0 end
end
local retry = 0
if avail < 1 then
  local need = 1
${slidingRetry}
end
${slidingReset}
return {avail, retry, reset, now}
`,
  true,
);

/** Forgets a key. KEYS: the key. ARGV: expiresAtUs, [nowUs]. Reply: 1, server now in µs. */
export const forgetKeyScript = redisScript(
  'forget-key',
  `${nowUnlessExpired(1)}
redis.call('DEL', KEYS[1])
return {1, now}
`,
  true,
);
