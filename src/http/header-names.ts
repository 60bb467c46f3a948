/**
 * The HTTP fields Spillway reads and writes. Names are configurable so a deployment can keep its
 * own conventions; {@link headerNamesOf} checks them once, at construction, and lower-cases them
 * (node:http delivers request field names in lower case, and a name that is not a token would
 * make writing a refusal throw on the first request that needs one).
 *
 * @module
 */
import { SpillwayConfigError } from '../index.js';

/** Field names Spillway uses. */
export interface HeaderNames {
  /** Request: remaining deadline in ms. @default 'spillway-deadline' */
  readonly deadline: string;
  /** Request: the caller's criticality. @default 'spillway-criticality' */
  readonly criticality: string;
  /** Request: attempt number, 1 for the first try. @default 'spillway-attempt' */
  readonly attempt: string;
  /** Response: `later | elsewhere | never`. @default 'spillway-retry' */
  readonly retry: string;
}

/** The default field names. */
export const defaultHeaderNames: HeaderNames = Object.freeze({
  deadline: 'spillway-deadline',
  criticality: 'spillway-criticality',
  attempt: 'spillway-attempt',
  retry: 'spillway-retry',
});

const keys = Object.keys(defaultHeaderNames) as readonly (keyof HeaderNames)[];

/** An HTTP field name (an RFC 9110 token). */
const token = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Fields HTTP itself uses to frame or route a message, and the fields a refusal writes: under
 * one of these names Spillway would read the wrong value or write a field twice. And
 * `__proto__`, a token no JavaScript object of fields can hold. Internal to `spillway/http`
 * (and its tests).
 */
export const takenHeaderNames: ReadonlySet<string> = new Set([
  '__proto__',
  'connection',
  'content-length',
  'content-type',
  'date',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Checks header-name options and fills in the defaults: each name given must be an HTTP field
 * name (a token), none of the fields HTTP or a refusal already uses, and the four must differ.
 * Names are lower-cased; a key set to `undefined` keeps its default; an unknown key is refused
 * (a misspelt option would otherwise be silently ignored).
 *
 * @throws SpillwayConfigError naming the option (`headerNames.deadline`, …) and the value.
 */
export function headerNamesOf(names: Partial<HeaderNames> | undefined): HeaderNames {
  if (names === undefined) return defaultHeaderNames;
  if (typeof names !== 'object' || names === null || Array.isArray(names)) {
    throw new SpillwayConfigError('headerNames', 'an object of field names', names);
  }
  for (const key of Object.keys(names)) {
    if (!(keys as readonly string[]).includes(key)) {
      throw new SpillwayConfigError(`headerNames.${key}`, `one of ${keys.join(', ')}`, key);
    }
  }
  const out: Record<keyof HeaderNames, string> = { ...defaultHeaderNames };
  const seen = new Map<string, keyof HeaderNames>();
  for (const key of keys) {
    const value = names[key] as unknown;
    if (value !== undefined) {
      if (typeof value !== 'string' || !token.test(value)) {
        throw new SpillwayConfigError(`headerNames.${key}`, 'an HTTP field name (a token)', value);
      }
      const lower = value.toLowerCase();
      if (takenHeaderNames.has(lower)) {
        throw new SpillwayConfigError(
          `headerNames.${key}`,
          'a field name HTTP and Spillway do not already use',
          value,
        );
      }
      out[key] = lower;
    }
    const other = seen.get(out[key]);
    if (other !== undefined) {
      throw new SpillwayConfigError(
        `headerNames.${key}`,
        `a name other than headerNames.${other}'s`,
        names[key] ?? out[key],
      );
    }
    seen.set(out[key], key);
  }
  return Object.freeze(out);
}
