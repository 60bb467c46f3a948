/**
 * A caller's side of one call edge: how a user or a server calls a simulated server under a
 * retry policy. `spillway` is the real `dependency()` on the simulator's clock, its work an
 * attempt at the server that gives up when the attempt's time is up, the instant the client's
 * own timer aborts its signal (as `fetch` does);
 * `naive` and `none` are the control group, written here because they are what Spillway is
 * compared with.
 *
 * @module
 */
import { dependency, type Dependency } from '../client/index.js';
import {
  DeadlineExceededError,
  DependencyTimeoutError,
  SpillwayConfigError,
  type AdaptiveThrottleOptions,
  type TimerHandle,
} from '../index.js';
import { nonNegativeNumber, positiveInteger, positiveNumber } from '../core/internal/validate.js';
import { rejectSoon } from '../core/internal/reject-soon.js';
import type { Random } from './random.js';
import type { SimClock } from './sim-clock.js';
import type { Answer, Done, SimRequest, SimServer } from './server.js';
import type { RetryPolicy } from './types.js';

/** Calls one server for a request due by `expiresAt`; `done` gets what the caller got. */
export type Link = (expiresAt: number, done: Done) => void;

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

/** What an attempt answered with success at once resolves to. */
const servedAtOnce = Promise.resolve();

/** What an attempt whose time is up rejects with (the client reads why from its own timer). */
const timeUp = Object.freeze(new DeadlineExceededError());

/**
 * One attempt at `server` as `dependency().call()`'s work, due by `expiresAt`: settles with
 * the server's answer, or, when its time is up first, gives up (the request marked abandoned)
 * as a fetch does when the attempt's signal aborts. It keeps its own timer for `remainingMs`
 * instead of listening on `ctx.signal`: the client's timer fires at the same instant (set just
 * before, it fires just before), and an `AbortSignal` with a listener costs 5 µs on Node 20,
 * more than the rest of a simulated request. An answer given at once (a refusal at the door)
 * needs no promise of its own; a refusal is then made late, once the client listens
 * (`rejectSoon`), as the client's own are.
 */
function attempt(server: SimServer, clock: SimClock, expiresAt: number): Promise<void> {
  const request: SimRequest = { expiresAt, abandoned: false };
  // Set before the server's own timers, so at the same instant the time is up first.
  const timer =
    expiresAt === Infinity
      ? undefined
      : clock.setOwnTimer(expiresAt - clock.now(), () => {
          request.abandoned = true;
          answered(timeUp);
        });
  let atOnce = false;
  let failedAtOnce: Error | undefined;
  let later: Done | undefined;
  let settled = false;
  const answered = (failure: Error | undefined): void => {
    if (settled) return;
    settled = true;
    if (timer !== undefined && failure !== timeUp) clock.clearTimer(timer);
    if (later !== undefined) return later(failure);
    atOnce = true;
    failedAtOnce = failure;
  };
  server.handle(request, answered);
  if (atOnce) return failedAtOnce === undefined ? servedAtOnce : rejectSoon(failedAtOnce);
  return new Promise<void>((resolve, reject) => {
    later = (failure) => {
      clock.touch();
      if (failure === undefined) resolve();
      else reject(failure);
    };
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
  const work = (ctx: { readonly remainingMs: number | undefined }): Promise<void> => {
    const left = ctx.remainingMs;
    return attempt(server, clock, left === undefined ? Infinity : clock.now() + left);
  };
  return (expiresAt, done) => {
    clock.touch();
    void dep
      .call(
        work,
        expiresAt === Infinity ? callOptions : { idempotent: true, deadline: { expiresAt } },
      )
      .then(
        () => done(undefined),
        (error: unknown) => done(error as Error),
      );
  };
}

/**
 * A naive attempt with a timeout, as the server sees it, holding its caller until answered. Once
 * given up on it still waits in a plain server's line (which serves it anyway), holding nothing
 * of its caller's. At 10 × overload a line of 30,000 such requests is what every scavenge
 * copies: one small object each, answered by the link's one `answered` function (a closure of
 * its own and the closure's context made each about 2.5 × that size; GC time over 60 spike runs
 * at 10 × halved without them).
 */
class NaiveRequest implements SimRequest {
  readonly expiresAt = Infinity;
  abandoned = false;
  caller: Done | undefined;
  timer: TimerHandle | undefined = undefined;

  constructor(caller: Done) {
    this.caller = caller;
  }
}

function naiveLink(p: {
  readonly clock: SimClock;
  readonly server: SimServer;
  readonly timeoutMs: number;
  readonly maxAttempts: number;
  readonly delayMs: number;
}): Link {
  const { clock, server, timeoutMs, maxAttempts, delayMs } = p;
  // One value for every timeout of this link, as a refusal is one per answer (see SimServer).
  const timedOut = Object.freeze(new DependencyTimeoutError({ timeoutMs }));
  // Every timeout of this link lasts the same: one queue, one entry in the event list.
  const timeouts = timeoutMs === Infinity ? undefined : clock.queue(timeoutMs);
  /** One attempt: the server's answer, or the timeout's if it comes first. */
  const once = (done: Done): void => {
    if (timeouts === undefined)
      return server.handle({ expiresAt: Infinity, abandoned: false }, done);
    const request = new NaiveRequest(done);
    request.timer = timeouts.set(() => {
      const caller = request.caller!;
      request.caller = request.timer = undefined;
      request.abandoned = true;
      caller(timedOut);
    });
    server.handle(request, answered);
  };
  // The server's answer to any attempt of this link: one function, the attempt's state on its
  // request (see `NaiveRequest`).
  const answered: Answer = (failure, r) => {
    const request = r as NaiveRequest;
    const caller = request.caller;
    if (caller === undefined) return;
    clock.clearTimer(request.timer!);
    request.caller = request.timer = undefined;
    caller(failure);
  };
  // One attempt (`none`): its answer is the caller's, with no retry loop to set up.
  if (maxAttempts === 1) return (_expiresAt, done) => once(done);
  return (_expiresAt, done) => {
    let attempts = 0;
    // An attempt answered at once (a refusal at the door) is followed by the next in the loop
    // below, not from inside its callback: any `maxAttempts` runs in a bounded stack.
    let looping = false;
    let again = false;
    const attemptAgain = (): void => {
      looping = true;
      do {
        again = false;
        attempts++;
        once(answered);
      } while (again);
      looping = false;
    };
    const answered = (failure: Error | undefined): void => {
      if (failure === undefined || attempts >= maxAttempts) return done(failure);
      if (delayMs > 0) clock.setOwnTimer(delayMs, attemptAgain);
      else if (looping) again = true;
      else attemptAgain();
    };
    attemptAgain();
  };
}
