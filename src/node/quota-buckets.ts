/**
 * A client's buckets under a route's memory policies, decided together: brought up to date
 * with one clock reading, and a token taken from each only when every one has it. The same
 * arithmetic as the memory store (`tokenEpsilon`, `waitMs`), on several buckets at once.
 *
 * @module
 */
import type { RateStore } from '../index.js';
import { tokenEpsilon, waitMs } from '../core/token-bucket/token-bucket-math.js';
import type { Limits } from './quota-limits.js';

/** One client: its numbers, and its buckets in the memory policies. */
export interface ClientState {
  limits: Limits;
  /** When its numbers are asked again, on the clock (Infinity for fixed numbers). */
  refreshAt: number;
  /** When its buckets were last brought up to date. */
  at: number;
  /** Tokens per policy (store policies' places unused). */
  readonly tokens: number[];
}

/**
 * Brings a client's memory buckets up to `now`, then takes a token from each if every one has
 * it; else takes none and says which refused (a bit each) and the longest wait.
 */
export function takeLocal(
  state: ClientState,
  now: number,
  stores: readonly (RateStore | undefined)[],
): { mask: number; wait: number } | undefined {
  refill(state, now, stores);
  const { tokens, limits } = state;
  let mask = 0;
  let wait = 0;
  for (let i = 0; i < tokens.length; i++) {
    if (stores[i] !== undefined) continue;
    const t = tokens[i]!;
    if (t + tokenEpsilon >= 1) continue;
    mask |= 1 << i;
    const w = waitMs(1 - t, limits.ratePerMs[i]!);
    if (w > wait) wait = w;
  }
  if (mask !== 0) return { mask, wait };
  for (let i = 0; i < tokens.length; i++) if (stores[i] === undefined) tokens[i] = tokens[i]! - 1;
  return undefined;
}

/** Adds what each memory bucket earned since it was last brought up to date, up to its size. */
export function refill(
  state: ClientState,
  now: number,
  stores: readonly (RateStore | undefined)[],
): void {
  const elapsed = now - state.at;
  state.at = now;
  if (!(elapsed > 0)) return;
  const { tokens, limits } = state;
  for (let i = 0; i < tokens.length; i++) {
    if (stores[i] !== undefined) continue;
    const t = tokens[i]! + elapsed * limits.ratePerMs[i]!;
    tokens[i] = t < limits.burst[i]! ? t : limits.burst[i]!;
  }
}
