/**
 * The Lua scripts behind the Redis store. Each runs atomically, reads time from Redis (`TIME`)
 * so every replica shares one clock, and replies with integers only (Lua numbers are
 * truncated on the way out, so each value is already rounded the safe way: waits up,
 * remaining down). Every script that reads time takes an optional last argument, `nowUs`,
 * that replaces `TIME` (for deterministic tests); an empty string means "use `TIME`".
 *
 * Take scripts (quota takes and lease acquires) share one shape: `need` tokens must be
 * available or nothing is granted, and up to `want` (>= need) are granted when they are;
 * `want > need` is how local leases take a small batch in one round trip. A refusal never
 * writes. They also carry a **server-side expiry**, `expiresAtUs` (Redis µs; '' for none),
 * just before `nowUs`: a call that reaches Redis after it — held by a stalled server, queued
 * or re-sent by the client after a reconnect — does nothing and replies `{-1, now}`, so a call
 * the store gave up on never charges. Every reply of a take script ends with Redis's now in
 * µs, from which the store learns how to write that expiry (see `redis-time.ts`).
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** A script with its SHA1, ready for EVALSHA. */
export interface RedisScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
  /**
   * True for take scripts: they take `expiresAtUs` after their own arguments, reply
   * `{-1, now}` when Redis's time is past it, and end every reply with Redis's now (µs).
   */
  readonly expires: boolean;
}

function script(name: string, lua: string, expires = false): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, lua, sha, expires });
}

// Microseconds now: the override when given, else Redis's own clock.
const nowUs = (arg: string): string => `
local now
if ${arg} ~= nil and ${arg} ~= '' then
  now = tonumber(${arg})
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end`;

// The window in whole µs from ARGV[1] in ms (fractions allowed), rounded down: a window longer
// than asked would refuse a client at exactly the rate.
const windowUs = `
local W = math.floor(tonumber(ARGV[1]) * 1000)
if W < 1 then W = 1 end`;

// Reads `now` (from the argument after the expiry), then stops at once if it is past the
// expiry: the caller has given up on this call, so it must change nothing.
const nowUnlessExpired = (expiryArg: number): string => `${nowUs(`ARGV[${expiryArg + 1}]`)}
local expiresAt = ARGV[${expiryArg}]
if expiresAt ~= nil and expiresAt ~= '' and now > tonumber(expiresAt) then
  return {-1, now}
end`;

/**
 * GCRA (the token bucket with one number of state). KEYS: tat. ARGV: emission interval T in
 * µs (may be fractional), burst B, need, want, expiresAtUs, [nowUs]. The key holds the
 * theoretical arrival time (TAT, whole µs, rounded up so rounding never admits extra) and
 * expires when the bucket is full again; a missing key is a full bucket.
 * Reply: granted, remaining, retryAfterMs (-1 when granted, or never possible), resetAfterMs,
 * server now in µs.
 */
export const gcraScript = script(
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
export const fixedWindowScript = script(
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
export const slidingWindowScript = script(
  'sliding-window',
  `${windowUs}
local N = tonumber(ARGV[2])
local need = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
${nowUnlessExpired(5)}
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
end
local reset = 0
if cur > 0 then
  reset = math.ceil((2 * W - into) / 1000)
elseif prev > 0 then
  reset = math.ceil((W - into) / 1000)
end
return {granted, avail - granted, retry, reset, w, now}
`,
  true,
);

// Lease expiry sweep shared by the semaphore scripts (bounded work per call).
const sweep = `
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', nowMs, 'LIMIT', 0, 100)
for i = 1, #expired do
  local id = expired[i]
  local wt = tonumber(redis.call('HGET', KEYS[2], id))
  if wt then
    redis.call('HINCRBY', KEYS[2], '#sum', -wt)
    redis.call('HDEL', KEYS[2], id)
  end
  redis.call('ZREM', KEYS[1], id)
end`;

// Both keys live until the last lease expires, plus a minute.
const keepAlive = `
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local keep = 60000
if last[2] then keep = tonumber(last[2]) - nowMs + 60000 end
redis.call('PEXPIRE', KEYS[1], keep)
redis.call('PEXPIRE', KEYS[2], keep)`;

/**
 * Weighted lease semaphore: acquire. KEYS: zset (lease -> expiry ms), hash (lease -> weight,
 * `#sum`, `#fence`, `#seq`). ARGV: limit, leaseId, weight, ttlMs, expiresAtUs, [nowUs].
 * Expired leases are swept first (at most 100 per call), so a crashed holder's weight comes
 * back after its TTL. The fence is strictly increasing per semaphore, even across the hash
 * expiring or a restart without persistence (it never falls below server ms × 1024), as long
 * as Redis's clock does not step back. Reply: acquired, available after, fence (0 if refused), seq, retry hint ms
 * (until the earliest lease expires; -1 when acquired or the weight exceeds the limit),
 * server now in µs.
 */
export const semAcquireScript = script(
  'sem-acquire',
  `
local limit = tonumber(ARGV[1])
local id = ARGV[2]
local weight = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
${nowUnlessExpired(5)}
local nowMs = math.floor(now / 1000)
${sweep}
if redis.call('ZSCORE', KEYS[1], id) then
  return redis.error_reply('SPILLWAY_DUPLICATE_LEASE ' .. id)
end
local sum = tonumber(redis.call('HGET', KEYS[2], '#sum')) or 0
if sum + weight > limit then
  local hint = -1
  if weight <= limit then
    local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    if first[2] then hint = tonumber(first[2]) - nowMs end
    if hint < 1 then hint = 1 end
  end
  return {0, limit - sum, 0, 0, hint, now}
end
redis.call('ZADD', KEYS[1], nowMs + ttl, id)
redis.call('HSET', KEYS[2], id, weight)
redis.call('HINCRBY', KEYS[2], '#sum', weight)
local fence = (tonumber(redis.call('HGET', KEYS[2], '#fence')) or 0) + 1
local floor = nowMs * 1024
if fence < floor then fence = floor end
redis.call('HSET', KEYS[2], '#fence', string.format('%.0f', fence))
local seq = redis.call('HINCRBY', KEYS[2], '#seq', 1)
${keepAlive}
return {1, limit - sum - weight, fence, seq, -1, now}
`,
  true,
);

/**
 * Extends a live lease to now + ttlMs. KEYS: zset, hash. ARGV: leaseId, ttlMs, [nowUs].
 * Never resurrects an expired lease. Reply: 1 renewed, 0 lost.
 */
export const semRenewScript = script(
  'sem-renew',
  `
local id = ARGV[1]
local ttl = tonumber(ARGV[2])
${nowUs('ARGV[3]')}
local nowMs = math.floor(now / 1000)
local score = redis.call('ZSCORE', KEYS[1], id)
if not score or tonumber(score) <= nowMs then return 0 end
redis.call('ZADD', KEYS[1], 'XX', nowMs + ttl, id)
${keepAlive}
return 1
`,
);

/**
 * Gives a lease back; idempotent. KEYS: zset, hash. ARGV: leaseId. Reply: released (1, or 0
 * if already gone), seq (0 if not released).
 */
export const semReleaseScript = script(
  'sem-release',
  `
local id = ARGV[1]
if redis.call('ZREM', KEYS[1], id) == 0 then return {0, 0} end
local wt = tonumber(redis.call('HGET', KEYS[2], id))
if wt then
  redis.call('HINCRBY', KEYS[2], '#sum', -wt)
  redis.call('HDEL', KEYS[2], id)
end
return {1, redis.call('HINCRBY', KEYS[2], '#seq', 1)}
`,
);
