/**
 * The semaphore scripts behind the Redis concurrency limit: weighted leases that expire, so a
 * crashed holder's weight comes back by itself. Acquire is a take script (see
 * `redis-script.ts`); renew and release are not: a late renew cannot resurrect a lease and a
 * late release is idempotent.
 *
 * @module
 */
import { batchScript, nowUs, redisScript } from './redis-script.js';

// Lease expiry sweep shared by the semaphore scripts (bounded work per call; zkey, hkey and
// nowMs in scope).
const sweep = `
local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', nowMs, 'LIMIT', 0, 100)
for j = 1, #expired do
  local lease = expired[j]
  local wt = tonumber(redis.call('HGET', hkey, lease))
  if wt then
    redis.call('HINCRBY', hkey, '#sum', -wt)
    redis.call('HDEL', hkey, lease)
  end
  redis.call('ZREM', zkey, lease)
end`;

// Both keys live until the last lease expires, plus a minute.
const keepAlive = `
local last = redis.call('ZRANGE', zkey, -1, -1, 'WITHSCORES')
local keep = 60000
if last[2] then keep = tonumber(last[2]) - nowMs + 60000 end
redis.call('PEXPIRE', zkey, keep)
redis.call('PEXPIRE', hkey, keep)`;

/**
 * Weighted lease semaphore: acquire, a batch take script (see `redis-script.ts`). KEYS per
 * item: zset (lease -> expiry ms), hash (lease -> weight, `#sum`, `#fence`, `#seq`). ARGV per
 * item: limit, leaseId, weight, ttlMs; then expiresAtUs, [nowUs]. Expired leases are swept
 * first (at most 100 per item), so a crashed holder's weight comes back after its TTL. The
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
${sweep}
if redis.call('ZSCORE', zkey, id) then
  return redis.error_reply('SPILLWAY_DUPLICATE_LEASE ' .. id)
end
local sum = tonumber(redis.call('HGET', hkey, '#sum')) or 0
if sum + weight > limit then
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
redis.call('ZADD', zkey, nowMs + ttl, id)
redis.call('HSET', hkey, id, weight)
redis.call('HINCRBY', hkey, '#sum', weight)
local fence = (tonumber(redis.call('HGET', hkey, '#fence')) or 0) + 1
local floor = nowMs * 1024
if fence < floor then fence = floor end
redis.call('HSET', hkey, '#fence', string.format('%.0f', fence))
local seq = redis.call('HINCRBY', hkey, '#seq', 1)
${keepAlive}
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
${keepAlive}
return 1
`,
);

/**
 * Gives a lease back; idempotent. KEYS: zset, hash. ARGV: leaseId. Reply: released (1, or 0
 * if already gone), seq (0 if not released).
 */
export const semReleaseScript = redisScript(
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
