/**
 * What every Lua script behind the Redis store follows. Each runs atomically, reads time from Redis (`TIME`)
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
 * The hot take scripts (the rate scripts, the lease acquire) are **batch scripts**: one call
 * decides any number of items, each with its own keys and arguments in fixed-width groups
 * (KEYS: `keys` per item; ARGV: `args` per item, then the one expiry and `nowUs`), replying
 * `reply` numbers per item, then Redis's now. One item is the plain call, and a batch runs as
 * one atomic script, item after item: the store sends the decisions made in one tick as one
 * call (see `call-gate.ts`).
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** The fixed widths of one item of a batch script. */
export interface BatchShape {
  /** Keys per item. */
  readonly keys: number;
  /** Arguments per item. */
  readonly args: number;
  /** Numbers in each item's reply. */
  readonly reply: number;
}

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
  /** Set on batch scripts (always take scripts): the widths of one item. */
  readonly batch?: BatchShape;
  /**
   * Set on clean-up scripts the clean-up lane may send several of as one call (see
   * `cleanup-lane.ts`): the widths of one item. Items are run in order; the reply is each
   * item's numbers, nothing after.
   */
  readonly cleanupBatch?: BatchShape;
}

/** `lua` named and hashed for EVALSHA; `expires` marks a take script. */
export function redisScript(name: string, lua: string, expires = false): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, lua, sha, expires });
}

/**
 * A batch take script from the Lua of one item, run once per item in order. In scope for
 * `item`: `now` (µs), `k` (the item's first key is `KEYS[k + 1]`), `a` (its first argument is
 * `ARGV[a + 1]`), and `out`/`o`: it writes its `shape.reply` numbers to `out[o + 1]`… and
 * adds `shape.reply` to `o`. `do break end` ends an item early (it must have written its
 * reply by then).
 */
export function batchScript(name: string, shape: BatchShape, item: string): RedisScript {
  const lua = `
local items = #KEYS / ${shape.keys}
${nowUnlessExpired(`items * ${shape.args} + 1`)}
${eachItem(shape, item)}
out[o + 1] = now
return out
`;
  const sha = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, lua, sha, expires: true, batch: Object.freeze({ ...shape }) });
}

/**
 * A clean-up script from the Lua of one item, run once per item in order, as many items as the
 * call has keys for. In scope for `item`: `k`, `a`, `out` and `o`, as in {@link batchScript}.
 * Not a take script: no expiry, no time in the reply.
 */
export function cleanupBatchScript(name: string, shape: BatchShape, item: string): RedisScript {
  const lua = `
${eachItem(shape, item)}
return out
`;
  const sha = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({
    name,
    lua,
    sha,
    expires: false,
    cleanupBatch: Object.freeze({ ...shape }),
  });
}

/** Lua that runs `item` once per item of the call, its reply numbers in `out` up to `o`. */
const eachItem = (shape: BatchShape, item: string): string => `
local out = {}
local o = 0
for i = 0, #KEYS / ${shape.keys} - 1 do
  local k = i * ${shape.keys}
  local a = i * ${shape.args}
  repeat
${item}
  until true
end`;

/** Lua that sets `now` in µs: the override in `arg` when given, else Redis's own clock. */
export const nowUs = (arg: string): string => `
local now
if ${arg} ~= nil and ${arg} ~= '' then
  now = tonumber(${arg})
else
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end`;

/**
 * Lua that reads `now` (from the argument after the expiry), then stops at once if it is past
 * the expiry: the caller has given up on this call, so it must change nothing. `expiryArg` is
 * the expiry's index in ARGV, a number or a Lua expression.
 */
export const nowUnlessExpired = (expiryArg: number | string): string => {
  const next = typeof expiryArg === 'number' ? expiryArg + 1 : `${expiryArg} + 1`;
  return `${nowUs(`ARGV[${next}]`)}
local expiresAt = ARGV[${expiryArg}]
if expiresAt ~= nil and expiresAt ~= '' and now > tonumber(expiresAt) then
  return {-1, now}
end`;
};
