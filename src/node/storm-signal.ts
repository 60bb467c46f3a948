/**
 * The retry-storm signal on a guard's routes (seed 003; SRE book, "Handling Overload"): each
 * route counts the `Spillway-Attempt` of what reaches its capacity checks in a decaying
 * histogram (`src/core/retry-storm`), and while most of it is retries — the pool behind its
 * callers is overloaded, not only this process — the route's refusals for load say `never`
 * instead of `later` or `elsewhere`, so callers stop rather than carry the storm to another
 * replica. A refusal that is the client's own (its quota, its penalty, its share of the slots)
 * keeps its signal: the pool's state changes nothing about it. The flips are published on
 * `spillway:retry-storm`.
 *
 * @module
 */
import type { Subscription } from '../index.js';
import type { Refusal, RefusalReason } from '../http/index.js';
import { retryStormChannel } from '../channels/channels.js';
import type { Storm } from '../core/retry-storm/retry-storm.js';

export type { RetryStormOptions } from '../core/retry-storm/retry-storm.js';

/** A refusal for load, as a storm words it: no `Retry-After`, `never`. */
const stops: Readonly<Record<'capacity' | 'shed' | 'overloaded', Refusal>> = Object.freeze({
  capacity: Object.freeze({ reason: 'capacity', signal: 'never' }),
  shed: Object.freeze({ reason: 'shed', signal: 'never' }),
  overloaded: Object.freeze({ reason: 'overloaded', signal: 'never' }),
});

/**
 * `refusal` as a storm words it: a refusal for the route's or the process's load (`capacity`,
 * `shed`, `overloaded`) becomes its `never`; any other is returned as it is. The checks pass
 * a client's refusal for its share of the slots (`tenantShare`) by: it is the client's own.
 */
export function inStorm(refusal: Refusal): Refusal {
  const reason: RefusalReason = refusal.reason;
  return reason === 'capacity' || reason === 'shed' || reason === 'overloaded'
    ? stops[reason]
    : refusal;
}

/** Publishes the flips of `route`'s storm on `spillway:retry-storm`. */
export function watchStorm(route: string, storm: Storm): Subscription {
  return storm.onChange((change) => {
    if (!retryStormChannel.hasSubscribers) return;
    retryStormChannel.publish({
      route,
      state: change.active ? 'entered' : 'left',
      retryShare: change.retryShare,
      arrivals: change.arrivals,
    });
  });
}
