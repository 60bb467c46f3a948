/**
 * The shared penalty box's scripts. Everything one box keeps lives under one hash tag, so each
 * script is atomic on Redis Cluster too (a box only holds clients that ignore 429s: small):
 *
 * - KEYS[1] `pb:s`, hash: client → `step|untilMs|quietMs|suspended` (Redis ms);
 * - KEYS[2] `pb:v`, hash: client → its recent violation times, comma-separated;
 * - KEYS[3] `pb:f`, sorted set, the change feed: client → the sequence number of its last
 *   change; a client with no state there is a tombstone (lifted, or its state expired);
 * - KEYS[4] `pb:x`, sorted set: client → when its state (or tombstone) goes, Redis ms;
 * - KEYS[5] `pb:m`, hash: `seq` (last sequence number), `swept` (the highest sequence
 *   number of a tombstone removed: a replica that had not read it must read everything again),
 *   `epoch` (when the box was first read: another epoch means Redis lost the box).
 *
 * Every script sweeps at most 100 expired entries first, so the box stays bounded with no
 * background work. Violations, suspensions and lifts are take scripts in shape (server-side
 * expiry, replies ending with Redis's now); the feed read is not (a late read changes nothing
 * a replica relies on) and replies with client keys as strings.
 *
 * @module
 */
import { nowUnlessExpired, nowUs, redisScript } from './redis-script.js';

// Ends expired states as tombstones (so replicas hear of it) and removes expired tombstones.
// Needs nowMs and tombMs.
const sweep = `
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', nowMs, 'LIMIT', 0, 100)
for i = 1, #gone do
  local g = gone[i]
  if redis.call('HEXISTS', KEYS[1], g) == 1 then
    redis.call('HDEL', KEYS[1], g)
    redis.call('HDEL', KEYS[2], g)
    redis.call('ZADD', KEYS[3], redis.call('HINCRBY', KEYS[5], 'seq', 1), g)
    redis.call('ZADD', KEYS[4], nowMs + tombMs, g)
  else
    local seq = tonumber(redis.call('ZSCORE', KEYS[3], g))
    if seq and seq > (tonumber(redis.call('HGET', KEYS[5], 'swept')) or 0) then
      redis.call('HSET', KEYS[5], 'swept', string.format('%.0f', seq))
    end
    redis.call('ZREM', KEYS[3], g)
    redis.call('ZREM', KEYS[4], g)
    redis.call('HDEL', KEYS[2], g)
  end
end`;

// Reads a client's state: step, untilMs, quietMs, suspended (all 0 when it has none); writes
// it; writes a change to the feed.
const state = `
local function loadState(id)
  local raw = redis.call('HGET', KEYS[1], id)
  if not raw then return 0, 0, 0, 0 end
  local a, b, c, d = string.match(raw, '^(%d+)|(%d+)|(%d+)|(%d)$')
  return tonumber(a), tonumber(b), tonumber(c), tonumber(d)
end
local function saveState(id, step, untilMs, quiet, susp)
  redis.call('HSET', KEYS[1], id, string.format('%.0f|%.0f|%.0f|%d', step, untilMs, quiet, susp))
end
local function changed(id)
  local seq = redis.call('HINCRBY', KEYS[5], 'seq', 1)
  redis.call('ZADD', KEYS[3], seq, id)
  return seq
end`;

/**
 * `n` violations by one client. ARGV: client, n, threshold, windowMs, liftAfterMs,
 * healthyForMs (how long this replica has read healthy; -1: not, so no step lifts), keepMs
 * (how long a state outlives its last step's lifting), suspendTtlMs, tombMs, the steps' waits
 * comma-separated (-1 for a suspension), expiresAtUs, [nowUs].
 *
 * First lifts the client by quiet time (as the memory box does), then records the violations
 * at Redis's now (at most `threshold` kept), and when `threshold` of them fall within
 * `windowMs` moves the client one step up (at most one step per call), starts the step's
 * wait, empties the ring and writes the change to the feed.
 * Reply: step, ms until its wait ends (0 if over), suspended, moved up (0/1), now in µs.
 */
export const penaltyViolateScript = redisScript(
  'penalty-violate',
  `
local id = ARGV[1]
local n = tonumber(ARGV[2])
local threshold = tonumber(ARGV[3])
local windowMs = tonumber(ARGV[4])
local liftAfter = tonumber(ARGV[5])
local healthyFor = tonumber(ARGV[6])
local keepMs = tonumber(ARGV[7])
local suspendTtl = tonumber(ARGV[8])
local tombMs = tonumber(ARGV[9])
local waits = {}
for w in string.gmatch(ARGV[10], '[^,]+') do waits[#waits + 1] = tonumber(w) end
${nowUnlessExpired(11)}
local nowMs = math.floor(now / 1000)
${sweep}
${state}
local step, untilMs, quiet, susp = loadState(id)
if susp == 1 then return {step, 0, 1, 0, now} end
if step > 0 and nowMs >= untilMs and healthyFor >= 0 then
  local from = math.max(untilMs, quiet, nowMs - healthyFor)
  local k = math.floor((nowMs - from) / liftAfter)
  if k > 0 then
    step = math.max(0, step - k)
    quiet = from + k * liftAfter
  end
end
local ring = {}
local stored = redis.call('HGET', KEYS[2], id)
if stored then
  for t in string.gmatch(stored, '[^,]+') do ring[#ring + 1] = tonumber(t) end
end
for i = 1, math.min(n, threshold) do ring[#ring + 1] = nowMs end
while #ring > threshold do table.remove(ring, 1) end
quiet = nowMs
local moved = 0
if #ring >= threshold and nowMs - ring[1] <= windowMs then
  if step < #waits then step = step + 1 end
  if waits[step] < 0 then
    susp = 1
    untilMs = nowMs
  else
    untilMs = math.ceil(nowMs + waits[step])
  end
  ring = {}
  moved = 1
end
saveState(id, step, untilMs, quiet, susp)
if #ring > 0 then
  redis.call('HSET', KEYS[2], id, table.concat(ring, ','))
else
  redis.call('HDEL', KEYS[2], id)
end
local expires
if susp == 1 then
  expires = nowMs + suspendTtl
else
  expires = math.max(untilMs, nowMs) + step * liftAfter + keepMs
end
redis.call('ZADD', KEYS[4], expires, id)
if moved == 1 then changed(id) end
local left = untilMs - nowMs
if left < 0 or susp == 1 then left = 0 end
return {step, left, susp, moved, now}
`,
  true,
);

/**
 * Suspends a client until lifted (or `suspendTtlMs`). ARGV: client, suspendTtlMs, tombMs,
 * expiresAtUs, [nowUs]. Reply: its step, now in µs.
 */
export const penaltySuspendScript = redisScript(
  'penalty-suspend',
  `
local id = ARGV[1]
local suspendTtl = tonumber(ARGV[2])
local tombMs = tonumber(ARGV[3])
${nowUnlessExpired(4)}
local nowMs = math.floor(now / 1000)
${sweep}
${state}
local step, untilMs, quiet = loadState(id)
if quiet == 0 then quiet = nowMs end
saveState(id, step, untilMs, quiet, 1)
redis.call('HDEL', KEYS[2], id)
redis.call('ZADD', KEYS[4], nowMs + suspendTtl, id)
changed(id)
return {step, now}
`,
  true,
);

/**
 * Lets a client out altogether: no suspension, no step, no violations; a tombstone in the
 * feed tells the replicas. ARGV: client, tombMs, expiresAtUs, [nowUs]. Reply: its step
 * before, whether it was suspended, now in µs.
 */
export const penaltyLiftScript = redisScript(
  'penalty-lift',
  `
local id = ARGV[1]
local tombMs = tonumber(ARGV[2])
${nowUnlessExpired(3)}
local nowMs = math.floor(now / 1000)
${sweep}
${state}
local step, untilMs, quiet, susp = loadState(id)
redis.call('HDEL', KEYS[1], id)
redis.call('HDEL', KEYS[2], id)
redis.call('ZADD', KEYS[4], nowMs + tombMs, id)
changed(id)
return {step, susp, now}
`,
  true,
);

/**
 * The changes after sequence number `since`, oldest first. ARGV: since, limit, tombMs,
 * [nowUs]. Reply: now in Redis ms, the feed's last sequence number, the highest swept one,
 * the box's epoch (set at its first read: a box Redis lost comes back with another), then
 * per change: client, seq, step (-1: a tombstone), ms until its wait ends, ms since its
 * quiet time started, suspended.
 */
export const penaltyFeedScript = redisScript(
  'penalty-feed',
  `
local since = ARGV[1]
local limit = tonumber(ARGV[2])
local tombMs = tonumber(ARGV[3])
${nowUs('ARGV[4]')}
local nowMs = math.floor(now / 1000)
${sweep}
${state}
local epoch = tonumber(redis.call('HGET', KEYS[5], 'epoch'))
if not epoch then
  epoch = now
  redis.call('HSET', KEYS[5], 'epoch', string.format('%.0f', epoch))
end
local out = {nowMs, tonumber(redis.call('HGET', KEYS[5], 'seq')) or 0,
  tonumber(redis.call('HGET', KEYS[5], 'swept')) or 0, epoch}
local feed = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. since, '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
for i = 1, #feed, 2 do
  local id = feed[i]
  out[#out + 1] = id
  out[#out + 1] = tonumber(feed[i + 1])
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    local step, untilMs, quiet, susp = loadState(id)
    local left = untilMs - nowMs
    if left < 0 then left = 0 end
    out[#out + 1] = step
    out[#out + 1] = left
    out[#out + 1] = math.max(0, nowMs - quiet)
    out[#out + 1] = susp
  else
    out[#out + 1] = -1
    out[#out + 1] = 0
    out[#out + 1] = 0
    out[#out + 1] = 0
  end
end
return out
`,
);
