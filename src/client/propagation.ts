/**
 * The context that travels with every request: the remaining deadline (`Spillway-Deadline`,
 * whole ms left when the attempt is sent), the criticality and the attempt number. Merged into
 * the caller's own headers without disturbing them; Spillway's fields win over same-named ones.
 *
 * @module
 */
import { maxAttemptsLimit, type Criticality } from '../index.js';
import { defaultHeaderNames, formatDeadlineMs, type HeaderNames } from '../http/index.js';

/** The propagation fields for one attempt, as a plain record. */
export function propagationHeaders(p: {
  readonly names: HeaderNames;
  readonly remainingMs: number | undefined;
  readonly criticality: Criticality;
  readonly attempt: number;
}): Record<string, string> {
  const names = p.names;
  const attempt = p.attempt < attemptFields.length ? attemptFields[p.attempt]! : String(p.attempt);
  if (names === defaultHeaderNames) {
    // Literal names: every record then has the shape a hand-written one has. Computed keys gave
    // each a shape of its own making, which fetch's header conversion (undici's, megamorphic
    // property access) looked up the slow way, on every call.
    const h: Record<string, string> = {
      'spillway-criticality': p.criticality,
      'spillway-attempt': attempt,
    };
    if (p.remainingMs !== undefined) h['spillway-deadline'] = formatDeadlineMs(p.remainingMs);
    return h;
  }
  const h: Record<string, string> = {
    [names.criticality]: p.criticality,
    [names.attempt]: attempt,
  };
  if (p.remainingMs !== undefined) h[names.deadline] = formatDeadlineMs(p.remainingMs);
  return h;
}

/** `Spillway-Attempt`'s values up to the most attempts a call may make, made once. */
const attemptFields: readonly string[] = Array.from({ length: maxAttemptsLimit + 1 }, (_, n) =>
  String(n),
);

/** Whatever `RequestInit.headers` accepts. */
export type HeadersLike = NonNullable<RequestInit['headers']>;

/**
 * `base` with `extra` set on top. A plain object is copied (the cheap, common case); `Headers`
 * and lists of pairs go through a `Headers` copy. Never mutates `base`.
 */
export function mergeHeaders(
  base: HeadersLike | undefined,
  extra: Readonly<Record<string, string>>,
): HeadersLike {
  if (base === undefined) return { ...extra };
  if (typeof base === 'object' && !(base instanceof Headers) && !Array.isArray(base)) {
    const out: Record<string, string> = {};
    for (const key of Object.keys(base)) {
      if (!Object.hasOwn(extra, key.toLowerCase()))
        out[key] = (base as Record<string, string>)[key]!;
    }
    return Object.assign(out, extra);
  }
  const h = new Headers(base);
  for (const key of Object.keys(extra)) h.set(key, extra[key]!);
  return h;
}
