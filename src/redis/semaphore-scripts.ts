/**
 * The semaphore scripts behind the Redis concurrency limit: weighted leases that expire, so a
 * crashed holder's weight comes back by itself. Acquire is a take script (see
 * `redis-script.ts`); renew and release are not: a late renew cannot resurrect a lease and a
 * late release is idempotent.
 *
 * @module
 */
import { nowUnlessExpired, nowUs, redisScript } from './redis-script.js';

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
export const semAcquireScript = redisScript(
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
export const semRenewScript = redisScript(
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
