/**
 * The semaphore scripts behind the Redis concurrency limit: weighted leases that expire, so a
 * crashed holder's weight comes back by itself. Acquire is a take script (see
 * `redis-script.ts`); renew and release are not: a late renew cannot resurrect a lease and a
 * late release is idempotent.
 *
 * Two keys per semaphore: a zset of leases (member: the lease id, score: its expiry in Redis
 * ms) and a hash of counters (`#sum`, the weight held; `#fence`; `#exp`, below). A lease id is
 * `<weight>:<unique>` ({@link leaseMember}), so releasing or sweeping a lease needs no lookup
 * of its weight: an acquire costs Redis three commands (four when nothing was held), a release
 * two — every `redis.call` from Lua costs about as much as the command it runs.
 *
 * @module
 */
import { batchScript, cleanupBatchScript, nowUs, redisScript } from './redis-script.js';

/** The id of a lease of `weight` in Redis: its weight, then an id unique across processes. */
export function leaseMember(weight: number, unique: string): string {
  return `${weight}:${unique}`;
}

/** Lua: the weight in a lease id (see {@link leaseMember}). */
const weightOf = (id: string): string => `(tonumber(string.match(${id}, '^(%d+):')) or 0)`;

// Sweeps expired leases (at most 100 a call) and takes their weight off `sum` and `#sum`;
// zkey, hkey, nowMs and sum in scope. An acquire sweeps only when the weight does not fit: an
// expired lease still counted can only make it refuse sooner, never admit more.
const sweep = `
local expired = redis.call('ZRANGEBYSCORE', zkey, '-inf', nowMs, 'LIMIT', 0, 100)
if #expired > 0 then
  for j = 1, #expired do sum = sum - ${weightOf('expired[j]')} end
  if sum < 0 then sum = 0 end
  redis.call('ZREM', zkey, unpack(expired))
  redis.call('HSET', hkey, '#sum', sum)
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
 * item: the zset, the hash. ARGV per item: limit, leaseId (`<weight>:<unique>`), weight, ttlMs;
 * then expiresAtUs, [nowUs]. When the weight does not fit, expired leases are swept (at most
 * 100 per item) before it refuses, so a crashed holder's weight comes back after its TTL. The
 * fence is strictly increasing per semaphore, even across the hash expiring or a restart
 * without persistence (it never falls below server ms × 1024), as long as Redis's clock does
 * not step back. Reply per item: acquired, available after, fence (0 if refused), retry hint
 * ms (until the earliest lease expires; -1 when acquired or the weight exceeds the limit);
 * then server now in µs. A lease id already held fails the whole call.
 */
export const semAcquireScript = batchScript(
  'sem-acquire',
  { keys: 2, args: 4, reply: 4 },
  `
local zkey = KEYS[k + 1]
local hkey = KEYS[k + 2]
local limit = tonumber(ARGV[a + 1])
local id = ARGV[a + 2]
local weight = tonumber(ARGV[a + 3])
local ttl = tonumber(ARGV[a + 4])
local nowMs = math.floor(now / 1000)
local st = redis.call('HMGET', hkey, '#sum', '#fence', '#exp')
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
  out[o + 4] = hint
  o = o + 4
  do break end
end
if redis.call('ZADD', zkey, 'NX', nowMs + ttl, id) == 0 then
  return redis.error_reply('SPILLWAY_DUPLICATE_LEASE ' .. id)
end
local fence = (tonumber(st[2]) or 0) + 1
local floor = nowMs * 1024
if fence < floor then fence = floor end
local expAt = st[3]
${needsExpiry}
redis.call('HSET', hkey, '#sum', sum + weight, '#fence', string.format('%.0f', fence),
  '#exp', string.format('%.0f', exp or tonumber(expAt)))
${expireBoth}
-- Redis deletes a zset left empty, and ZADD made it again without an expiry: nothing was held
-- (sum 0), so give it the hash's.
if sum == 0 and not exp then
  local left = tonumber(expAt) - nowMs
  if left < 1 then left = 1 end
  redis.call('PEXPIRE', zkey, left)
end
out[o + 1] = 1
out[o + 2] = limit - sum - weight
out[o + 3] = fence
out[o + 4] = -1
o = o + 4`,
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
 * leaseId; reply 1 released, or 0 if already gone. The clean-up lane sends the releases made
 * in one tick as one call.
 */
export const semReleaseScript = cleanupBatchScript(
  'sem-release',
  { keys: 2, args: 1, reply: 1 },
  `
local id = ARGV[a + 1]
local released = redis.call('ZREM', KEYS[k + 1], id)
if released == 1 then redis.call('HINCRBY', KEYS[k + 2], '#sum', -${weightOf('id')}) end
out[o + 1] = released
o = o + 1`,
);
