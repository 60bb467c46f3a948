/**
 * The semaphore scripts behind the Redis concurrency limit: weighted leases that expire, so a
 * crashed holder's weight comes back by itself. Acquire is a take script (see
 * `redis-script.ts`); renew and release are not: a late renew cannot resurrect a lease and a
 * late release is idempotent.
 *
 * @module
 */
import { batchScript, cleanupBatchScript, nowUs, redisScript } from './redis-script.js';

// Sweeps expired leases (at most 100 a call) and takes their weight off `sum` as well as off
// `#sum`; zkey, hkey, nowMs and sum in scope. An acquire sweeps only when the semaphore looks
// full: an expired lease still counted only makes it refuse sooner, never admit more.
const sweep = `
local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', nowMs, 'LIMIT', 0, 100)
for j = 1, #expired do
  local lease = expired[j]
  local wt = tonumber(redis.call('HGET', hkey, lease))
  if wt then
    redis.call('HINCRBY', hkey, '#sum', -wt)
    redis.call('HDEL', hkey, lease)
    sum = sum - wt
  end
  redis.call('ZREM', zkey, lease)
end`;

// Both keys live until the last lease expires, plus one to two minutes. `#exp` in the hash is
// when the keys' expiry last set runs out (Redis ms); they are expired again only when a lease
// needs more than that, so a steady stream of acquires sets it about once a minute instead of
// on every acquire. `needsExpiry` (zkey, hkey, nowMs and ttl in scope, the hash's #exp in
// `expAt`) sets `exp` to the new #exp, or nil when the one set is long enough; `expireBoth`
// then sets both keys' expiry, after the hash is written (so that both exist).
const needsExpiry = `
local exp = nil
if nowMs + ttl + 60000 > (tonumber(expAt) or 0) then exp = nowMs + ttl + 120000 end`;
const expireBoth = `
if exp then
  redis.call('PEXPIRE', zkey, ttl + 120000)
  redis.call('PEXPIRE', hkey, ttl + 120000)
end`;

/**
 * Weighted lease semaphore: acquire, a batch take script (see `redis-script.ts`). KEYS per
 * item: zset (lease -> expiry ms), hash (lease -> weight, `#sum`, `#fence`, `#seq`, `#exp`).
 * ARGV per item: limit, leaseId, weight, ttlMs; then expiresAtUs, [nowUs]. When the weight
 * does not fit, expired leases are swept (at most 100 per item) before it refuses, so a
 * crashed holder's weight comes back after its TTL. Three Redis calls when it fits. The
 * fence is strictly increasing per semaphore, even across the hash expiring or a restart
 * without persistence (it never falls below server ms × 1024), as long as Redis's clock does
 * not step back. Reply per item: acquired, available after, fence (0 if refused), seq, retry
 * hint ms (until the earliest lease expires; -1 when acquired or the weight exceeds the
 * limit); then server now in µs. A lease id already held fails the whole call.
 */
export const semAcquireScript = batchScript(
  'sem-acquire',
  { keys: 2, args: 4, reply: 5 },
  `
local zkey = KEYS[k + 1]
local hkey = KEYS[k + 2]
local limit = tonumber(ARGV[a + 1])
local id = ARGV[a + 2]
local weight = tonumber(ARGV[a + 3])
local ttl = tonumber(ARGV[a + 4])
local nowMs = math.floor(now / 1000)
local st = redis.call('HMGET', hkey, '#sum', '#fence', '#seq', '#exp')
local sum = tonumber(st[1]) or 0
if sum + weight > limit then
${sweep}
end
if sum + weight > limit then
  if redis.call('ZSCORE', zkey, id) then
    return redis.error_reply('SPILLWAY_DUPLICATE_LEASE ' .. id)
  end
  local hint = -1
  if weight <= limit then
    local first = redis.call('ZRANGE', zkey, 0, 0, 'WITHSCORES')
    if first[2] then hint = tonumber(first[2]) - nowMs end
    if hint < 1 then hint = 1 end
  end
  out[o + 1] = 0
  out[o + 2] = limit - sum
  out[o + 3] = 0
  out[o + 4] = 0
  out[o + 5] = hint
  o = o + 5
  do break end
end
if redis.call('ZADD', zkey, 'NX', nowMs + ttl, id) == 0 then
  return redis.error_reply('SPILLWAY_DUPLICATE_LEASE ' .. id)
end
local fence = (tonumber(st[2]) or 0) + 1
local floor = nowMs * 1024
if fence < floor then fence = floor end
local seq = (tonumber(st[3]) or 0) + 1
local expAt = st[4]
${needsExpiry}
redis.call('HSET', hkey, id, weight, '#sum', sum + weight, '#fence', string.format('%.0f', fence),
  '#seq', string.format('%.0f', seq), '#exp', string.format('%.0f', exp or tonumber(expAt)))
${expireBoth}
out[o + 1] = 1
out[o + 2] = limit - sum - weight
out[o + 3] = fence
out[o + 4] = seq
out[o + 5] = -1
o = o + 5`,
);

/**
 * Extends a live lease to now + ttlMs. KEYS: zset, hash. ARGV: leaseId, ttlMs, [nowUs].
 * Never resurrects an expired lease. Reply: 1 renewed, 0 lost.
 */
export const semRenewScript = redisScript(
  'sem-renew',
  `
local zkey = KEYS[1]
local hkey = KEYS[2]
local id = ARGV[1]
local ttl = tonumber(ARGV[2])
${nowUs('ARGV[3]')}
local nowMs = math.floor(now / 1000)
local score = redis.call('ZSCORE', zkey, id)
if not score or tonumber(score) <= nowMs then return 0 end
redis.call('ZADD', zkey, 'XX', nowMs + ttl, id)
local expAt = redis.call('HGET', hkey, '#exp')
${needsExpiry}
if exp then redis.call('HSET', hkey, '#exp', string.format('%.0f', exp)) end
${expireBoth}
return 1
`,
);

/**
 * Gives leases back; idempotent. A clean-up batch script: per item, KEYS zset, hash; ARGV
 * leaseId; reply released (1, or 0 if already gone), seq (0 if not released). The clean-up lane
 * sends the releases made in one tick as one call.
 */
export const semReleaseScript = cleanupBatchScript(
  'sem-release',
  { keys: 2, args: 1, reply: 2 },
  `
local zkey = KEYS[k + 1]
local hkey = KEYS[k + 2]
local id = ARGV[a + 1]
if redis.call('ZREM', zkey, id) == 0 then
  out[o + 1] = 0
  out[o + 2] = 0
  o = o + 2
  do break end
end
local st = redis.call('HMGET', hkey, id, '#sum', '#seq')
local seq = (tonumber(st[3]) or 0) + 1
local wt = tonumber(st[1])
if wt then
  redis.call('HDEL', hkey, id)
  redis.call('HSET', hkey, '#sum', (tonumber(st[2]) or 0) - wt, '#seq', string.format('%.0f', seq))
else
  redis.call('HSET', hkey, '#seq', string.format('%.0f', seq))
end
out[o + 1] = 1
out[o + 2] = seq
o = o + 2`,
);
