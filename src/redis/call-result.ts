/**
 * What a Redis call resolves with, for the gate's hot path and its clean-up lane alike: the
 * script's integer reply, or a failure saying why there is none. Never a rejection.
 *
 * @module
 */

/** Why a call produced no reply. */
export type FailureKind =
  /** No reply within `timeoutMs`; the command may still run (take scripts then expire). */
  | 'timeout'
  /** Redis ran the script after its server-side expiry: it did nothing. */
  | 'expired'
  /** The client or Redis answered with an error. */
  | 'error'
  /** The client was not connected: nothing was sent. */
  | 'not-ready'
  /** The store's breaker is open: nothing was sent. */
  | 'breaker-open'
  /** `maxInFlight` calls were waiting already: nothing was sent. */
  | 'saturated'
  /** A clean-up call (release, renewal) left a full queue unsent: its lease expires by TTL. */
  | 'dropped';

/** A call that produced no reply; the caller answers by its failure policy. */
export interface CallFailure {
  readonly failed: FailureKind;
  readonly error?: unknown;
}

/** The keys and arguments of one script call. */
export interface ScriptRequest {
  readonly keys: string[];
  readonly args: (string | number)[];
  /** The reply may hold strings too (see `toList`). @default false (integers only) */
  readonly mixed?: boolean;
}

export const notReady: CallFailure = Object.freeze({ failed: 'not-ready' });
export const breakerOpen: CallFailure = Object.freeze({ failed: 'breaker-open' });
export const saturated: CallFailure = Object.freeze({ failed: 'saturated' });
export const timedOut: CallFailure = Object.freeze({ failed: 'timeout' });
export const expired: CallFailure = Object.freeze({ failed: 'expired' });
export const dropped: CallFailure = Object.freeze({ failed: 'dropped' });

/** True when `r` is a failure rather than a reply. */
export function isFailure(r: number[] | CallFailure): r is CallFailure {
  return !Array.isArray(r);
}

/** Checks a script reply (RESP2 or RESP3) is a list of numbers; bigints become numbers. */
export function toNumbers(reply: unknown): number[] | undefined {
  if (typeof reply === 'number') return [reply];
  if (!Array.isArray(reply)) return undefined;
  const out = reply as unknown[];
  for (let i = 0; i < out.length; i++) {
    const v = out[i];
    if (typeof v === 'number') continue;
    if (typeof v !== 'bigint') return undefined;
    out[i] = Number(v);
  }
  return out as number[];
}

/**
 * Checks a reply is a list of numbers and strings (a script that names keys, such as the
 * penalty box's change feed); bigints become numbers. Typed as the gate's replies are: the
 * caller that asked for a mixed reply reads its strings.
 */
export function toList(reply: unknown): number[] | undefined {
  if (!Array.isArray(reply)) return undefined;
  const out = reply as unknown[];
  for (let i = 0; i < out.length; i++) {
    const v = out[i];
    if (typeof v === 'number' || typeof v === 'string') continue;
    if (typeof v === 'bigint') out[i] = Number(v);
    else if (v instanceof Uint8Array) out[i] = Buffer.from(v).toString('utf8');
    else return undefined;
  }
  return out as number[];
}

/** The failure for a reply that is not a list of integers. */
export function malformed(): CallFailure {
  return { failed: 'error', error: new TypeError('Redis script reply is not a list of integers') };
}
