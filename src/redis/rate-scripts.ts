/**
 * The rate scripts, one per algorithm the store runs: GCRA, fixed window and sliding window.
 * Each is a batch take script (see `redis-script.ts` for the shape, the time override, the
 * server-side expiry and the batch layout every one of them follows), one key per item.
 *
 * @module
 */
import { batchScript } from './redis-script.js';
import {
  fixedRead,
  gcraRead,
  slidingRead,
  slidingReset,
  slidingRetry,
  windowUs,
} from './rate-lua.js';

/** Every rate take: one key, four arguments (period, limit, need, want) per item. */
const shape = { keys: 1, args: 4 } as const;

// The item's key, the arguments every algorithm reads after its period, and `granted`: up to
// `want` when `need` is there (`avail` in scope), else none.
const item = `
local key = KEYS[k + 1]
local need = tonumber(ARGV[a + 3])
local want = tonumber(ARGV[a + 4])`;
const grant = `
local granted = 0
if avail >= need then
  granted = want
  if granted > avail then granted = avail end
end`;

/**
 * GCRA (the token bucket with one number of state). KEYS: tat. ARGV: emission interval T in
 * µs (may be fractional), burst B, need, want; then expiresAtUs, [nowUs]. The key holds the
 * theoretical arrival time (TAT, whole µs, rounded up so rounding never admits extra) and
 * expires a second after the bucket is full again, as the windows' keys outlive their window
 * by a second; a missing key, or one whose TAT has passed, is a full bucket. Expiring at the
 * moment it is full made every decision of a client below its rate create a key that Redis
 * then expired: its expiry cycle, deleting those in bulk, held every call for 2-3 ms several
 * times a second (S7: p99 at half rate). Lingering, a client's next decision finds its key.
 * Reply per item: granted, remaining, retryAfterMs (-1 when granted, or never possible),
 * resetAfterMs; then server now in µs.
 */
export const gcraScript = batchScript(
  'gcra',
  { ...shape, reply: 4 },
  `${item}
local T = tonumber(ARGV[a + 1])
local B = tonumber(ARGV[a + 2])
${gcraRead}
local avail = math.floor((tau - (tat - now)) / T + 1e-9)
if avail < 0 then avail = 0 end
${grant}
local newtat = tat
local retry = -1
if granted > 0 then
  newtat = math.ceil(tat + granted * T)
  redis.call('SET', key, string.format('%.0f', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1000)
elseif need * T <= tau then
  retry = math.ceil((tat + need * T - tau - now) / 1000)
  if retry < 1 then retry = 1 end
end
local remaining = math.floor((tau - (newtat - now)) / T + 1e-9)
if remaining < 0 then remaining = 0 end
local reset = math.ceil((newtat - now) / 1000)
if reset < 0 then reset = 0 end
out[o + 1] = granted
out[o + 2] = remaining
out[o + 3] = retry
out[o + 4] = reset
o = o + 4`,
);

/**
 * Fixed window aligned on Redis time: window w = floor(nowUs / W), W in whole µs. KEYS: hash
 * {w, c}. ARGV: window in ms (may be fractional), limit N, need, want; then expiresAtUs,
 * [nowUs]. Exactly N grants per window when demand is there; refusals do not count.
 * Reply per item: granted, remaining, retryAfterMs (-1 when granted, or never possible),
 * resetAfterMs (to the window's end), window index; then server now in µs.
 */
export const fixedWindowScript = batchScript(
  'fixed-window',
  { ...shape, reply: 5 },
  `${item}
${windowUs('ARGV[a + 1]')}
local N = tonumber(ARGV[a + 2])
${fixedRead}
local avail = N - c
if avail < 0 then avail = 0 end
${grant}
local reset = math.ceil(((w + 1) * W - now) / 1000)
local retry = -1
if granted > 0 then
  redis.call('HSET', key, 'w', string.format('%.0f', w), 'c', c + granted)
  redis.call('PEXPIRE', key, reset + 1000)
elseif need <= N then
  retry = reset
end
out[o + 1] = granted
out[o + 2] = avail - granted
out[o + 3] = retry
out[o + 4] = reset
out[o + 5] = w
o = o + 5`,
);

/**
 * Sliding-window counter: the current aligned window's count plus the previous one's, taken
 * as spread evenly over it and counted for the part that still overlaps the trailing window.
 * KEYS: hash {w, c, p}. ARGV: window in ms (may be fractional), limit N, need, want; then
 * expiresAtUs, [nowUs]. Stores two counts, never a log.
 *
 * The previous window's share is counted in whole requests: the fewest that evenly spread
 * requests could still have in the trailing window, ceil(p × (W − into) / W) − 1, at least 0,
 * taken at the end of the microsecond `TIME` reports. Rounded the other way (or not at all),
 * a client whose requests reach Redis exactly W / N apart is refused in every window after a
 * full one, though it never has N requests in any window; counted this way, requests at least
 * W / N apart are never refused, at any phase. What it admits: at most N in any aligned
 * window, and the weighted estimate p × (W − into) / W + c never above N + 1.
 * Reply per item: granted, remaining, retryAfterMs (-1 when granted, or never possible),
 * resetAfterMs (until both windows stop counting), window index; then server now in µs.
 */
export const slidingWindowScript = batchScript(
  'sliding-window',
  { ...shape, reply: 5 },
  `${item}
${windowUs('ARGV[a + 1]')}
local N = tonumber(ARGV[a + 2])
${slidingRead}
${grant}
local retry = -1
if granted > 0 then
  cur = cur + granted
  redis.call('HSET', key, 'w', string.format('%.0f', w), 'c', cur, 'p', prev)
  redis.call('PEXPIRE', key, math.ceil((2 * W - into) / 1000) + 1000)
elseif need <= N then
${slidingRetry}
end
${slidingReset}
out[o + 1] = granted
out[o + 2] = avail - granted
out[o + 3] = retry
out[o + 4] = reset
out[o + 5] = w
o = o + 5`,
);
