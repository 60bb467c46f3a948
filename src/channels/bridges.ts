/**
 * Bridges from a core primitive's own events to the channels, for the primitives a guard or a
 * dependency holds: core stays free of `node:` modules, so the adapter that owns a breaker or
 * an adaptive limit listens to it once and republishes, naming the route or dependency. The
 * listener builds nothing unless the channel has subscribers; state changes are rare.
 *
 * @module
 */
import type { CircuitBreaker, LimitChangeEvent, LimitSource, Subscription } from '../index.js';
import { breakerChannel, limitChannel } from './channels.js';

/** Whom a bridged primitive serves: a route of a guard, or a dependency. */
export interface Owner {
  readonly route?: string | undefined;
  readonly dependency?: string | undefined;
}

/**
 * Publishes a dependency's breaker changes on `spillway:breaker:state`. A breaker shared by
 * more dependencies than it takes listeners (64) is bridged for the first ones only: watching
 * never makes building a dependency fail.
 */
export function bridgeBreaker(
  dependency: string,
  breaker: CircuitBreaker | undefined,
): Subscription | undefined {
  if (breaker === undefined) return undefined;
  return listen(() =>
    breaker.onStateChange((e) => {
      if (breakerChannel.hasSubscribers) {
        breakerChannel.publish({ dependency, from: e.from, to: e.to });
      }
    }),
  );
}

/**
 * Publishes an adaptive limit's moves on `spillway:limit:change`; a fixed limit (a number, or
 * a source with no `onChange`) has nothing to publish.
 */
export function bridgeLimit(owner: Owner, source: unknown): Subscription | undefined {
  const onChange = (source as { onChange?: unknown } | null | undefined)?.onChange;
  if (typeof source !== 'object' || typeof onChange !== 'function') return undefined;
  const route = owner.route;
  const dependency = owner.dependency;
  const subscribe = onChange as (listener: (e: LimitChangeEvent) => void) => Subscription;
  return listen(() =>
    subscribe.call(source as LimitSource, (e) => {
      if (limitChannel.hasSubscribers) {
        limitChannel.publish({
          route,
          dependency,
          limit: e.limit,
          previous: e.previous,
          rttMs: e.rttMs,
          dropped: e.dropped,
        });
      }
    }),
  );
}

function listen(subscribe: () => Subscription): Subscription | undefined {
  try {
    return subscribe();
  } catch {
    // The primitive's listeners are all taken (it is shared that widely): not bridged.
    return undefined;
  }
}
