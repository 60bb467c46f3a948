/**
 * A caller's side of one call edge: how a user or a server calls a simulated server under a
 * retry policy. `spillway` is the real `dependency()` on the simulator's clock, its work an
 * attempt at the server that gives up when the attempt's signal aborts (as `fetch` does);
 * `naive` and `none` are the control group, written here because they are what Spillway is
 * compared with.
 *
 * @module
 */
import { dependency, type Dependency } from '../client/index.js';
import {
  DependencyTimeoutError,
  SpillwayConfigError,
  type AdaptiveThrottleOptions,
} from '../index.js';
import { nonNegativeNumber, positiveInteger, positiveNumber } from '../core/internal/validate.js';
import type { Random } from './random.js';
import type { SimClock } from './sim-clock.js';
import type { SimRequest, SimServer } from './server.js';
import type { RetryPolicy } from './types.js';

/** Calls one server; resolves on success, rejects with what the caller got. */
export type Link = (expiresAt: number) => Promise<void>;

/** Builds the link to `server` for `policy` (checked here, named under `option`). */
export function link(
  option: string,
  policy: RetryPolicy,
  p: {
    readonly clock: SimClock;
    readonly random: Random;
    readonly server: SimServer;
    readonly name: string;
  },
): Link {
  if (typeof policy !== 'object' || policy === null) {
    throw new SpillwayConfigError(
      option,
      "a retry policy ({ kind: 'none' | 'naive' | 'spillway' })",
      policy,
    );
  }
  if (policy.kind === 'spillway') return spillwayLink(policy.options ?? {}, p);
  if (policy.kind === 'none' || policy.kind === 'naive') {
    const timeoutMs =
      policy.timeoutMs === undefined
        ? Infinity
        : positiveNumber(`${option}.timeoutMs`, policy.timeoutMs);
    const naive = policy.kind === 'naive';
    const maxAttempts = naive
      ? positiveInteger(`${option}.maxAttempts`, policy.maxAttempts ?? 3)
      : 1;
    const delayMs = naive ? nonNegativeNumber(`${option}.delayMs`, policy.delayMs ?? 0) : 0;
    return naiveLink({ ...p, timeoutMs, maxAttempts, delayMs });
  }
  throw new SpillwayConfigError(
    `${option}.kind`,
    "'none', 'naive' or 'spillway'",
    (policy as { kind?: unknown }).kind,
  );
}

/** One attempt at `server`, given up (rejected, the request marked abandoned) when `signal` aborts. */
function attempt(
  server: SimServer,
  expiresAt: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const request: SimRequest = { expiresAt, abandoned: false };
  const served = server.handle(request);
  if (signal === undefined) return served;
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      request.abandoned = true;
      reject(signal.reason as Error);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    served.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as received
        reject(error);
      },
    );
  });
}

function spillwayLink(
  options: NonNullable<Extract<RetryPolicy, { kind: 'spillway' }>['options']>,
  p: {
    readonly clock: SimClock;
    readonly random: Random;
    readonly server: SimServer;
    readonly name: string;
  },
): Link {
  const { clock, random, server } = p;
  // The run's generator for the jitter and the throttle's coin, unless built ones are given.
  const retry = options.retry;
  const withRandom =
    retry === undefined ||
    retry === false ||
    typeof (retry.backoff as { next?: unknown })?.next === 'function'
      ? retry === undefined
        ? { backoff: { random } }
        : retry
      : { ...retry, backoff: { ...retry.backoff, random } };
  const throttle = options.throttle;
  const built =
    typeof (throttle as { tryRequest?: unknown } | undefined)?.tryRequest === 'function';
  const dep: Dependency = dependency({
    ...options,
    retry: withRandom,
    ...(throttle === false || built
      ? {}
      : { throttle: { ...(throttle as AdaptiveThrottleOptions | undefined), random } }),
    name: p.name,
    clock,
  });
  const callOptions = { idempotent: true };
  const work = (ctx: {
    readonly remainingMs: number | undefined;
    readonly signal: AbortSignal;
  }): Promise<void> => {
    const left = ctx.remainingMs;
    // Unbounded: no signal to make, nothing to give up on.
    if (left === undefined) return attempt(server, Infinity, undefined);
    return attempt(server, clock.now() + left, ctx.signal);
  };
  return (expiresAt) =>
    dep.call(
      work,
      expiresAt === Infinity ? callOptions : { idempotent: true, deadline: { expiresAt } },
    );
}

function naiveLink(p: {
  readonly clock: SimClock;
  readonly server: SimServer;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly delayMs: number;
}): Link {
  const { clock, server, timeoutMs, maxAttempts, delayMs } = p;
  const once = (): Promise<void> => {
    if (timeoutMs === Infinity) return attempt(server, Infinity, undefined);
    const request: SimRequest = { expiresAt: Infinity, abandoned: false };
    return new Promise<void>((resolve, reject) => {
      const timer = clock.setTimer(timeoutMs, () => {
        request.abandoned = true;
        reject(new DependencyTimeoutError({ timeoutMs }));
      });
      server.handle(request).then(
        () => {
          clock.clearTimer(timer);
          resolve();
        },
        (error: unknown) => {
          clock.clearTimer(timer);
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as received
          reject(error);
        },
      );
    });
  };
  return async () => {
    for (let n = 1; ; n++) {
      try {
        return await once();
      } catch (error) {
        if (n >= maxAttempts) throw error;
        if (delayMs > 0) await clock.sleep(delayMs);
      }
    }
  };
}
