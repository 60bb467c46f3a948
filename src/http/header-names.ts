/**
 * The HTTP fields Spillway reads and writes. Names are configurable (lower-case, as Node
 * delivers them) so a deployment can keep its own conventions.
 *
 * @module
 */

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
