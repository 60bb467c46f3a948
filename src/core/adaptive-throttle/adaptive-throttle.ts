/**
 * Client-side adaptive throttling, as in Google's SRE book ("Handling Overload"): over the
 * last `windowMs`, count the requests the application made (including those refused here) and
 * the ones the dependency accepted; refuse a new request locally with probability
 * `max(0, (requests − k × accepts) / (requests + 1))`. While the dependency accepts, nothing is
 * refused; when it refuses most calls, most calls never leave the process. Counted separately
 * per criticality, so a dependency shedding `sheddable` work does not throttle `critical` work.
 * Memory is fixed: 4 criticalities × 2 counters × the window's slices.
 *
 * A request is counted once its outcome is known — refused here, accepted, or refused (or left
 * unanswered) by the dependency — never while it is in flight: counted when sent, a burst of
 * calls to a healthy dependency would make `requests` lead `accepts` by the burst and be
 * refused before any answer came back. A request that ends without the dependency's word (the
 * caller gave up, or its own request was malformed) is not counted at all.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import {
  checkedCriticalityRank,
  criticalities,
  type Criticality,
} from '../criticality/criticality.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import { SlicedWindow } from '../internal/sliced-window.js';
import {
  clockLike,
  nonNegativeInteger,
  numberInRange,
  optionsObject,
  positiveNumber,
} from '../internal/validate.js';

/** Options of {@link adaptiveThrottle}. */
export interface AdaptiveThrottleOptions {
  /**
   * How many requests per accepted one are sent before throttling starts: 2 lets the
   * dependency refuse about one request per accepted one. Lower is more aggressive (≥ 1).
   * @default 2
   */
  readonly k?: number;
  /** How far back requests and accepts count, in ms. @default 120_000 */
  readonly windowMs?: number;
  /** Width of one slice of the window, in ms (at most 3,600 slices). @default 1_000 */
  readonly bucketMs?: number;
  /**
   * Requests of a criticality the window must hold before any is refused locally. The rule is
   * noisy on little traffic (after one refusal it would drop every other request), so a quiet
   * client is never throttled. @default 10
   */
  readonly minRequests?: number;
  /**
   * Ceiling on the refusal probability, so some requests still go and a recovery is seen
   * within seconds rather than a whole window. From 0 to 1. @default 0.9
   */
  readonly maxRejectProbability?: number;
  /** A source of uniform numbers in [0, 1), for tests. @default Math.random */
  readonly random?: () => number;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** The answer to {@link AdaptiveThrottle.tryRequest}. */
export type ThrottleDecision =
  { readonly ok: true } | { readonly ok: false; readonly rejectProbability: number };

/** Emitted on each local refusal. */
export interface ThrottleRejectEvent {
  readonly criticality: Criticality;
  readonly rejectProbability: number;
}

/** An adaptive throttle for one dependency. */
export interface AdaptiveThrottle {
  /**
   * Decides whether a request may go (default criticality `critical`). A request refused here
   * is counted at once; one let through is counted when its outcome is recorded.
   */
  tryRequest(criticality?: Criticality): ThrottleDecision;
  /**
   * The dependency accepted a request let through (it answered, even with an error that is
   * not a refusal): counts the request and its accept.
   */
  recordAccept(criticality?: Criticality): void;
  /**
   * The dependency refused a request let through, or failed to answer it in time (overload,
   * its own timeout, unreachable): counts the request without an accept. A request that ends
   * for the caller's own reasons (it gave up, or sent something malformed) is recorded as
   * neither.
   */
  recordRefusal(criticality?: Criticality): void;
  /** The refusal probability now, for metrics. */
  rejectProbability(criticality?: Criticality): number;
  readonly onReject: Event<ThrottleRejectEvent>;
}

const defaults = {
  k: 2,
  minRequests: 10,
  windowMs: 120_000,
  bucketMs: 1_000,
  maxRejectProbability: 0.9,
} as const;

const admitted: ThrottleDecision = Object.freeze({ ok: true });

/**
 * Creates an adaptive throttle.
 *
 * @example
 * const throttle = adaptiveThrottle(); // k = 2 over 2 minutes
 * const d = throttle.tryRequest('sheddable');
 * if (!d.ok) throw new ThrottledError(d);
 * const res = await send();
 * if (res.status === 429 || res.status === 503) throttle.recordRefusal('sheddable');
 * else throttle.recordAccept('sheddable');
 */
export function adaptiveThrottle(options?: AdaptiveThrottleOptions): AdaptiveThrottle {
  return ownedAdaptiveThrottle(options);
}

/**
 * A throttle as the component that builds it (and so shares its clock) may drive it: by
 * criticality rank, at a reading that component took, so one reading serves several parts.
 * `dependency()` takes this path on every call; internal, not exported from the package.
 */
export interface OwnedAdaptiveThrottle extends AdaptiveThrottle {
  /** {@link AdaptiveThrottle.tryRequest} for criticality rank `rank`, at `now` on its clock. */
  tryRequestAt(rank: number, now: number): ThrottleDecision;
  /** {@link AdaptiveThrottle.recordAccept} for criticality rank `rank`, at `now` on its clock. */
  recordAcceptAt(rank: number, now: number): void;
  /** {@link AdaptiveThrottle.recordRefusal} for criticality rank `rank`, at `now` on its clock. */
  recordRefusalAt(rank: number, now: number): void;
}

/** {@link adaptiveThrottle}, typed for the component that owns it. */
export function ownedAdaptiveThrottle(options?: AdaptiveThrottleOptions): OwnedAdaptiveThrottle {
  const o = optionsObject('adaptiveThrottle options', options);
  const k = numberInRange('k', o.k ?? defaults.k, [1, 1_000]);
  const windowMs = positiveNumber('windowMs', o.windowMs ?? defaults.windowMs);
  const bucketMs = positiveNumber('bucketMs', o.bucketMs ?? defaults.bucketMs);
  const slices = Math.ceil(windowMs / bucketMs);
  if (slices > 3_600 || bucketMs > windowMs) {
    throw new SpillwayConfigError(
      'bucketMs',
      `at most windowMs (${windowMs}) and at least windowMs / 3600`,
      bucketMs,
    );
  }
  const maxP = numberInRange(
    'maxRejectProbability',
    o.maxRejectProbability ?? defaults.maxRejectProbability,
    [0, 1],
  );
  const minRequests = nonNegativeInteger('minRequests', o.minRequests ?? defaults.minRequests);
  const random = o.random ?? Math.random;
  if (typeof random !== 'function') {
    throw new SpillwayConfigError('random', 'a function returning numbers in [0, 1)', random);
  }
  const clock = clockLike('clock', o.clock ?? systemClock);
  return new Throttle({ k, maxP, minRequests, random, clock, slices, sliceMs: windowMs / slices });
}

interface Settings {
  readonly k: number;
  readonly maxP: number;
  readonly minRequests: number;
  readonly random: () => number;
  readonly clock: Clock;
  readonly slices: number;
  readonly sliceMs: number;
}

class Throttle implements OwnedAdaptiveThrottle {
  readonly #s: Settings;
  // Counter 2r: requests of criticality rank r; 2r + 1: its accepts.
  readonly #window: SlicedWindow;
  readonly #rejected = new Emitter<ThrottleRejectEvent>();
  readonly onReject = this.#rejected.event;

  constructor(settings: Settings) {
    this.#s = settings;
    this.#window = new SlicedWindow({
      sliceMs: settings.sliceMs,
      slices: settings.slices,
      counters: 2 * criticalities.length,
      now: settings.clock.now(),
    });
  }

  tryRequest(criticality?: Criticality): ThrottleDecision {
    return this.tryRequestAt(rankOf(criticality), this.#s.clock.now());
  }

  tryRequestAt(rank: number, now: number): ThrottleDecision {
    const w = this.#window;
    w.advance(now);
    const p = this.#probability(rank);
    if (p === 0 || this.#s.random() >= p) return admitted;
    // Refused here: its outcome is known, so it counts now.
    w.addToLatest(2 * rank, 1);
    if (this.#rejected.size > 0) {
      this.#rejected.emit({ criticality: criticalities[rank]!, rejectProbability: p });
    }
    return { ok: false, rejectProbability: p };
  }

  recordAccept(criticality?: Criticality): void {
    this.recordAcceptAt(rankOf(criticality), this.#s.clock.now());
  }

  recordAcceptAt(rank: number, now: number): void {
    const w = this.#window;
    w.advance(now);
    w.addToLatest(2 * rank, 1);
    w.addToLatest(2 * rank + 1, 1);
  }

  recordRefusal(criticality?: Criticality): void {
    this.recordRefusalAt(rankOf(criticality), this.#s.clock.now());
  }

  recordRefusalAt(rank: number, now: number): void {
    this.#window.add(2 * rank, 1, now);
  }

  rejectProbability(criticality?: Criticality): number {
    const r = rankOf(criticality);
    this.#window.advance(this.#s.clock.now());
    return this.#probability(r);
  }

  /** The probability for `rank`, as of the window's last move. */
  #probability(rank: number): number {
    const requests = this.#window.sumSoFar(2 * rank);
    if (requests < this.#s.minRequests) return 0;
    const accepts = this.#window.sumSoFar(2 * rank + 1);
    const p = (requests - this.#s.k * accepts) / (requests + 1);
    if (!(p > 0)) return 0;
    return p < this.#s.maxP ? p : this.#s.maxP;
  }
}

function rankOf(criticality: Criticality | undefined): number {
  return criticality === undefined ? 1 : checkedCriticalityRank(criticality);
}
