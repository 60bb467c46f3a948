/**
 * What a core limit's refusal means as an HTTP refusal: the one place that knows the core's
 * reasons — a concurrency limit's (`AcquireResult`), a quota's (`RateDecision`), the penalty
 * box's (`PenaltyVerdict`). The guard asks it about its own limits; `refusalFromError` asks it
 * about a limit used inside a handler, then passes the answer up as a dependency's.
 *
 * @module
 */
import type { PenaltyVerdict, RateRefusalReason, RejectionReason } from '../index.js';
import type { QuotaFields, QuotaInfo, Refusal } from './refusal.js';

/**
 * A core limit's refusal, as the core hands it over. A quota's `RateDecision` has no `reason`
 * when the client's quota is spent, and `store-unavailable` when its store could not be asked;
 * a `RateLimitedError` has none either.
 */
export interface CoreRejection {
  readonly reason?: RejectionReason | RateRefusalReason | PenaltyVerdict['reason'] | undefined;
  readonly retryAfterMs?: number | undefined;
}

const deadline: Refusal = Object.freeze({ reason: 'deadline' });
const unavailable: Refusal = Object.freeze({ reason: 'unavailable' });
const suspended: Refusal = Object.freeze({ reason: 'suspended' });

/**
 * The refusal for `rejection`, or undefined when there is nobody to answer (`aborted`: the
 * caller gave up) or the reason is unknown. `capacitySignal` goes with a full or too slow line;
 * `quota` describes a spent quota for the RateLimit fields and `violated-policies`.
 */
export function refusalOfRejection(
  rejection: CoreRejection,
  capacitySignal: 'later' | 'elsewhere' = 'later',
  quota?: QuotaInfo | QuotaFields,
): Refusal | undefined {
  const reason = rejection.reason;
  switch (reason) {
    case undefined:
      return { reason: 'quota', retryAfterMs: rejection.retryAfterMs, quota };
    case 'queue-full':
    case 'queue-timeout':
      return { reason: 'capacity', signal: capacitySignal, retryAfterMs: rejection.retryAfterMs };
    case 'shed':
    case 'penalty':
    case 'blocked':
      return { reason, retryAfterMs: rejection.retryAfterMs };
    case 'suspended':
      return suspended;
    case 'deadline':
      return deadline;
    case 'store-unavailable':
      // The shared store is down and its policy is to refuse: not this client's fault.
      return unavailable;
    default:
      return undefined;
  }
}
