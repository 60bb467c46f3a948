/**
 * Key layout: `prefix:{name:id}:kind`. Everything one script touches shares exactly one hash
 * tag, so multi-key scripts stay in one slot on Redis Cluster.
 *
 * The encoding is injective: distinct (name, id) pairs never share a key. A part is written
 * as itself when it is short and plain, with each `:` escaped as `%3A`; anything else (braces
 * that would break the tag, `%`, `#`, spaces, long or empty text) becomes `#` and the
 * base64url SHA-256 of the part. Neither form contains `:`, so the one `:` in the tag splits
 * name from id in exactly one place; plain input never contains `%` or `#`, so a written
 * part is either plain (and unescapes to its input) or a digest, never both.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** What a key holds; part of the key so one limiter's kinds never collide. */
export type KeyKind =
  | 'gcra'
  | 'fw'
  | 'sw'
  | 'lease:z'
  | 'lease:h'
  /** A penalty box's states, violation rings, change feed, expiries and counters. */
  | 'pb:s'
  | 'pb:v'
  | 'pb:f'
  | 'pb:x'
  | 'pb:m';

// Written as-is (colons escaped) inside a hash tag: no braces, %, # or spaces; short.
const plain = /^[A-Za-z0-9._:@/-]{1,128}$/;

/** `part` with `:` escaped when it is plain, otherwise `#` + base64url(sha256(part)). */
export function encodeKeyPart(part: string): string {
  if (plain.test(part)) return part.includes(':') ? part.replaceAll(':', '%3A') : part;
  return `#${createHash('sha256').update(part).digest('base64url')}`;
}

/** Which limiter and which client a key belongs to. */
export interface KeyScope {
  /** The limiter's name. */
  readonly name: string;
  /** The client (or other) id within the limiter. */
  readonly id: string;
}

/** The key of `kind` for `scope`, under `prefix`: `prefix:{name:id}:kind`. */
export function redisKey(prefix: string, scope: KeyScope, kind: KeyKind): string {
  return `${prefix}:{${encodeKeyPart(scope.name)}:${encodeKeyPart(scope.id)}}:${kind}`;
}

/**
 * {@link redisKey} with the prefix, name and kind fixed: each id's key is then one
 * concatenation, the name encoded once (the decision path builds a key per decision).
 */
export function redisKeyFor(prefix: string, name: string, kind: KeyKind): (id: string) => string {
  const head = `${prefix}:{${encodeKeyPart(name)}:`;
  const tail = `}:${kind}`;
  return (id) => head + encodeKeyPart(id) + tail;
}

/** The hash tag of a key: the text between its first `{` and the next `}`. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}
