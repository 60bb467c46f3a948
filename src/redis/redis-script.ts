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

/** `lua` named and hashed for EVALSHA; `expires` marks a take script. */
export function redisScript(name: string, lua: string, expires = false): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return Object.freeze({ name, lua, sha, expires });
}

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
 * the expiry: the caller has given up on this call, so it must change nothing.
 */
export const nowUnlessExpired = (expiryArg: number): string => `${nowUs(`ARGV[${expiryArg + 1}]`)}
local expiresAt = ARGV[${expiryArg}]
if expiresAt ~= nil and expiresAt ~= '' and now > tonumber(expiresAt) then
  return {-1, now}
end`;
