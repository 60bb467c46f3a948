/**
 * The six ways a request can end (BENCHMARKS.md rule 2). Every request ends as exactly one of
 * them, and latency is kept per outcome so refusals never flatter the latency of real work.
 *
 * @module
 */

/**
 * - `ok`: a 2xx response.
 * - `rejected`: 429 or 503, the overload signal (its `Retry-After` is recorded).
 * - `error`: any other status.
 * - `timeout`: the client's deadline passed first; the socket was destroyed.
 * - `network`: the connection was refused, reset or closed, or the response was garbage.
 * - `dropped`: the generator could not send it (connection or in-flight cap reached, or its
 *   deadline had passed before it could be sent).
 */
export type Outcome = 'ok' | 'rejected' | 'error' | 'timeout' | 'network' | 'dropped';

/** Every outcome, in report order. */
export const outcomes: readonly Outcome[] = [
  'ok',
  'rejected',
  'error',
  'timeout',
  'network',
  'dropped',
];

/** The outcome of a response with this status. */
export function outcomeOfStatus(status: number): 'ok' | 'rejected' | 'error' {
  if (status >= 200 && status < 300) return 'ok';
  if (status === 429 || status === 503) return 'rejected';
  return 'error';
}
