/**
 * How important a unit of work is, after Google's SRE book: under pressure the least critical
 * goes first. Ranks are small integers so limiters can index arrays by them.
 *
 * @module
 */
import { SpillwayArgumentError } from '../errors/argument-error.js';

/** The four criticalities, most important first. The default is `critical`. */
export const criticalities = ['critical-plus', 'critical', 'sheddable-plus', 'sheddable'] as const;

/** How important a unit of work is. */
export type Criticality = (typeof criticalities)[number];

/** The criticality work has when nobody says otherwise. */
export const defaultCriticality: Criticality = 'critical';

/** 0 for `critical-plus` … 3 for `sheddable`; -1 for anything else. */
export function criticalityRank(value: unknown): number {
  switch (value) {
    case 'critical-plus':
      return 0;
    case 'critical':
      return 1;
    case 'sheddable-plus':
      return 2;
    case 'sheddable':
      return 3;
    default:
      return -1;
  }
}

/** True for one of the four criticality names. */
export function isCriticality(value: unknown): value is Criticality {
  return criticalityRank(value) !== -1;
}

/**
 * The rank of `value` as a caller's argument named `option`: a `SpillwayArgumentError` naming
 * it and the four names when it is not one of them. Internal to core (not re-exported).
 */
export function checkedCriticalityRank(value: unknown, option = 'criticality'): number {
  const rank = criticalityRank(value);
  if (rank < 0) {
    throw new SpillwayArgumentError(option, `one of ${criticalities.join(', ')}`, value);
  }
  return rank;
}
