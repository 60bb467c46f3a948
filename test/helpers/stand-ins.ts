// Stand-ins for the guard's collaborators where the real one cannot be put in the state a test
// needs on demand: a shared quota store that cannot be reached, and an event loop judged
// saturated.
import { Emitter, type Criticality, type RateDecision, type RateStore } from '../../src/index.js';
import type { EventLoopMonitor } from '../../src/node/index.js';

/** A RateStore whose backing service is unreachable and whose policy is to refuse. */
export function unreachableStore(): RateStore<Promise<RateDecision>> {
  return {
    take: (_key, _n, policy) =>
      Promise.resolve({
        ok: false,
        remaining: 0,
        retryAfterMs: 1_000,
        limit: policy.burst,
        resetMs: 0,
        degraded: true,
        reason: 'store-unavailable',
      }),
  };
}

/** A monitor that sheds what `shed` says, and reports each completion to `onComplete`. */
export function loopMonitor(
  shed: (criticality: Criticality | undefined) => boolean,
  onComplete: (latencyMs: number) => void = () => undefined,
): EventLoopMonitor {
  return {
    shouldShed: shed,
    onComplete,
    get saturated() {
      return shed('sheddable');
    },
    utilization: 0,
    delayMs: 0,
    safeInflight: Infinity,
    onSample: new Emitter<never>().event,
    close: () => undefined,
    [Symbol.dispose]: () => undefined,
  };
}
