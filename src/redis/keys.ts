/**
 * Key layout: `prefix:{limiter:client}:kind`. Everything one script touches shares exactly
 * one hash tag, so multi-key scripts stay in one slot on Redis Cluster. Names and client ids
 * that could break the tag (braces), or are long or odd, are replaced by a digest.
 *
 * @module
 */
import { createHash } from 'node:crypto';

/** What a key holds; part of the key so one limiter's kinds never collide. */
export type KeyKind = 'gcra' | 'fw' | 'sw' | 'sem:z' | 'sem:h';

// Safe as-is inside a hash tag: no braces, no spaces, short.
const plain = /^[A-Za-z0-9._:@/-]{1,128}$/;

/** `part` itself when it is plain, otherwise `h:` + base64url(sha1(part)). */
export function encodeKeyPart(part: string): string {
  if (plain.test(part)) return part;
  return `h:${createHash('sha1').update(part).digest('base64url')}`;
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

/** The hash tag of a key: the text between its first `{` and the next `}`. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}
