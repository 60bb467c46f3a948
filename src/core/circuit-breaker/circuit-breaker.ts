/**
 * A circuit breaker: closed → open after sustained failures (see {@link TripPolicy}) → after a
 * cool-down of `openMs`, half-open with `halfOpenProbes` probe calls → closed when every probe
 * succeeds, open again on the first probe failure. Callers beyond the probes are refused at
 * once, never queued. Refusals made in this process (own cap, budget, throttle, deadline, an
 * aborting caller) are `ignore`d: they say nothing about the dependency. State serialises with
 * `toJSON()` and comes back through `initialState`. No timers: the open → half-open move
 * happens on the first look after the cool-down.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { CircuitOpenError } from '../errors/circuit-open-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { Emitter, type Event } from '../events/emitter.js';
import { clockLike, numberInRange, optionsObject, positiveNumber } from '../internal/validate.js';
import { isLocalRefusal } from '../retry/classify.js';
import { tripWindow, type TripPolicy, type TripSnapshot, type TripWindow } from './trip-policy.js';

/** Where a breaker is. */
export type CircuitState = 'closed' | 'open' | 'half-open';

/** What `toJSON` saves and `initialState` restores. Plain JSON. */
export interface CircuitBreakerState {
  readonly state: CircuitState;
  /** Wall-clock epoch ms at which an open breaker lets probes through. */
  readonly openUntilWallMs?: number | undefined;
  /** The closed state's recent outcomes. */
  readonly window?: TripSnapshot | undefined;
}

/** Options of {@link circuitBreaker}. */
export interface CircuitBreakerOptions {
  /** When a closed breaker opens. @default { kind: 'consecutive', failures: 5 } */
  readonly trip?: TripPolicy;
  /** Cool-down before half-open, in ms. @default 5_000 */
  readonly openMs?: number;
  /** Probe calls let through when half-open (1 to 100); all must succeed to close. @default 1 */
  readonly halfOpenProbes?: number;
  /** A success slower than this many ms counts as a failure. @default undefined (off) */
  readonly slowCallMs?: number | undefined;
  /** State saved by `toJSON()`, e.g. from before a restart. */
  readonly initialState?: CircuitBreakerState | undefined;
  /** The dependency's name, for {@link CircuitOpenError}. */
  readonly name?: string | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock;
}

/** One admitted call; report how it ended exactly once (later reports are ignored). */
export interface BreakerCall {
  /** The dependency answered well (a slow answer counts as a failure when `slowCallMs` is set). */
  success(): void;
  /** The dependency failed: an error, a refusal, a timeout. */
  failure(): void;
  /** The outcome says nothing about the dependency (a local refusal, the caller gave up). */
  ignore(): void;
}

/** The answer to {@link CircuitBreaker.tryAcquire}. */
export type BreakerDecision =
  | { readonly ok: true; readonly call: BreakerCall }
  | {
      readonly ok: false;
      readonly state: 'open' | 'half-open';
      /** The rest of the cool-down, when open. */
      readonly retryAfterMs: number | undefined;
    };

/** Emitted on every change of state. */
export interface StateChangeEvent {
  readonly from: CircuitState;
  readonly to: CircuitState;
}

/** Options of {@link CircuitBreaker.run}. */
export interface BreakerRunOptions {
  /** Passed to `fn`; a failure after it aborted is ignored (the caller left). */
  readonly signal?: AbortSignal | undefined;
  /** Which errors count against the dependency. @default everything but local refusals and aborts */
  readonly isFailure?: ((error: unknown) => boolean) | undefined;
}

/** A circuit breaker. */
export interface CircuitBreaker {
  /** Admits a call (closed, or a free probe when half-open) or refuses it at once. */
  tryAcquire(): BreakerDecision;
  /** Runs `fn` through the breaker; throws {@link CircuitOpenError} when refused. */
  run<T>(
    fn: (context: { readonly signal: AbortSignal }) => T | PromiseLike<T>,
    options?: BreakerRunOptions,
  ): Promise<T>;
  /** The state now (an open breaker whose cool-down is over reads `half-open`). */
  readonly state: CircuitState;
  readonly onStateChange: Event<StateChangeEvent>;
  /** The state as plain JSON, for `initialState`. */
  toJSON(): CircuitBreakerState;
}

const defaults = { openMs: 5_000, halfOpenProbes: 1 } as const;
const neverAborted = new AbortController().signal;

/**
 * Creates a circuit breaker.
 *
 * @example
 * const breaker = circuitBreaker({ trip: { kind: 'time', windowMs: 30_000, minimumCalls: 20, failureRatio: 0.5 } });
 * const d = breaker.tryAcquire();
 * if (!d.ok) return fallback();
 * try { const v = await call(); d.call.success(); return v; } catch (e) { d.call.failure(); throw e; }
 */
export function circuitBreaker(options?: CircuitBreakerOptions): CircuitBreaker {
  return ownedCircuitBreaker(options);
}

/**
 * A breaker as the component that builds it (and so shares its clock) may drive it: while
 * closed, a call is admitted and reported without a ticket object. `dependency()` takes this path
 * on every call; internal, not exported from the package.
 */
export interface OwnedCircuitBreaker extends CircuitBreaker {
  /**
   * Admits a call while the breaker is closed and measures no slow calls: returns the generation
   * to report it under with {@link reportClosed}, or -1 (then use `tryAcquire`, which handles
   * every other state). A call whose outcome says nothing (`ignore`) need not be reported.
   */
  admitClosed(): number;
  /**
   * Reports, once, how a call `admitClosed` let in ended, at `now` on the breaker's own clock
   * (read here when not given). Ignored once the breaker has changed state since.
   */
  reportClosed(generation: number, kind: 'success' | 'failure', now?: number): void;
}

/** {@link circuitBreaker}, typed for the component that owns it (see {@link OwnedCircuitBreaker}). */
export function ownedCircuitBreaker(options?: CircuitBreakerOptions): OwnedCircuitBreaker {
  const o = optionsObject('circuitBreaker options', options);
  const clock = clockLike('clock', o.clock ?? systemClock);
  const slowCallMs =
    o.slowCallMs === undefined ? Infinity : positiveNumber('slowCallMs', o.slowCallMs);
  return new Breaker({
    window: tripWindow(o.trip, clock.now()),
    openMs: positiveNumber('openMs', o.openMs ?? defaults.openMs),
    probes: Math.floor(
      numberInRange('halfOpenProbes', o.halfOpenProbes ?? defaults.halfOpenProbes, [1, 100]),
    ),
    slowCallMs,
    name: o.name,
    clock,
    initial: o.initialState,
  });
}

interface Settings {
  readonly window: TripWindow;
  readonly openMs: number;
  readonly probes: number;
  readonly slowCallMs: number;
  readonly name: string | undefined;
  readonly clock: Clock;
  readonly initial: CircuitBreakerState | undefined;
}

class Call implements BreakerCall {
  readonly #breaker: Breaker;
  readonly #generation: number;
  readonly #startedAt: number;
  #settled = false;

  constructor(breaker: Breaker, generation: number, startedAt: number) {
    this.#breaker = breaker;
    this.#generation = generation;
    this.#startedAt = startedAt;
  }

  success(): void {
    if (this.#settle()) this.#breaker.outcome(this.#generation, 'success', this.#startedAt);
  }

  failure(): void {
    if (this.#settle()) this.#breaker.outcome(this.#generation, 'failure', this.#startedAt);
  }

  ignore(): void {
    if (this.#settle()) this.#breaker.outcome(this.#generation, 'ignore', this.#startedAt);
  }

  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    return true;
  }
}

class Breaker implements OwnedCircuitBreaker {
  readonly #s: Settings;
  readonly #clock: Clock;
  #state: CircuitState = 'closed';
  // Bumped on every change of state (and half-open restart): outcomes of calls admitted under
  // an older generation no longer move the breaker.
  #generation = 0;
  #openUntil = 0;
  #halfOpenSince = 0;
  #probesLeft = 0;
  #probeSuccesses = 0;
  readonly #changed = new Emitter<StateChangeEvent>();
  readonly onStateChange = this.#changed.event;

  constructor(settings: Settings) {
    this.#s = settings;
    this.#clock = settings.clock;
    if (settings.initial !== undefined) this.#restore(settings.initial);
  }

  get state(): CircuitState {
    if (this.#state === 'open' && this.#clock.now() >= this.#openUntil) this.#halfOpen();
    return this.#state;
  }

  tryAcquire(): BreakerDecision {
    if (this.#state === 'closed') return { ok: true, call: this.#admit() };
    const now = this.#clock.now();
    if (this.#state === 'open') {
      if (now < this.#openUntil) {
        return { ok: false, state: 'open', retryAfterMs: Math.ceil(this.#openUntil - now) };
      }
      this.#halfOpen();
    }
    // Probes that have not reported within a whole cool-down are presumed lost: start over,
    // so a forgotten call can never leave the breaker stuck half-open.
    if (this.#probesLeft === 0 && now - this.#halfOpenSince >= this.#s.openMs) {
      this.#generation++;
      this.#startProbes(now);
    }
    if (this.#probesLeft > 0) {
      this.#probesLeft--;
      return { ok: true, call: this.#admit() };
    }
    return { ok: false, state: 'half-open', retryAfterMs: undefined };
  }

  async run<T>(
    fn: (context: { readonly signal: AbortSignal }) => T | PromiseLike<T>,
    options?: BreakerRunOptions,
  ): Promise<T> {
    const d = this.tryAcquire();
    if (!d.ok)
      throw new CircuitOpenError({ retryAfterMs: d.retryAfterMs, dependency: this.#s.name });
    const signal = options?.signal ?? neverAborted;
    try {
      const value = await fn({ signal });
      d.call.success();
      return value;
    } catch (error) {
      const isFailure = options?.isFailure;
      const counts =
        isFailure === undefined ? !signal.aborted && !isLocalRefusal(error) : isFailure(error);
      if (counts) d.call.failure();
      else d.call.ignore();
      throw error;
    }
  }

  toJSON(): CircuitBreakerState {
    const state = this.state;
    const now = this.#clock.now();
    if (state === 'open') {
      return { state, openUntilWallMs: this.#clock.wallNow() + (this.#openUntil - now) };
    }
    if (state === 'half-open') return { state };
    return { state, window: this.#s.window.snapshot(now) };
  }

  admitClosed(): number {
    return this.#state === 'closed' && this.#s.slowCallMs === Infinity ? this.#generation : -1;
  }

  /** Called by a {@link Call} once it settles. */
  outcome(generation: number, kind: 'success' | 'failure' | 'ignore', startedAt: number): void {
    if (generation !== this.#generation) return;
    const now = this.#clock.now();
    const slow = kind === 'success' && now - startedAt > this.#s.slowCallMs;
    this.#settled(slow ? 'failure' : kind, now);
  }

  reportClosed(generation: number, kind: 'success' | 'failure', now?: number): void {
    // The generation changes with every change of state: a call whose generation still
    // matches was let in while closed, and the breaker is closed still.
    if (generation !== this.#generation) return;
    this.#settled(kind, now ?? this.#clock.now());
  }

  #settled(kind: 'success' | 'failure' | 'ignore', now: number): void {
    const failure = kind === 'failure';
    if (this.#state === 'closed') {
      if (kind !== 'ignore' && this.#s.window.record(failure, now)) this.#open(now);
    } else if (this.#state === 'half-open') {
      if (kind === 'ignore') this.#probesLeft++;
      else if (failure) this.#open(now);
      else if (++this.#probeSuccesses >= this.#s.probes) this.#close();
    }
  }

  #admit(): Call {
    const startedAt = this.#s.slowCallMs === Infinity ? 0 : this.#clock.now();
    return new Call(this, this.#generation, startedAt);
  }

  #open(now: number): void {
    this.#openUntil = now + this.#s.openMs;
    this.#move('open');
  }

  #halfOpen(): void {
    this.#move('half-open');
    this.#startProbes(this.#clock.now());
  }

  #startProbes(now: number): void {
    this.#halfOpenSince = now;
    this.#probesLeft = this.#s.probes;
    this.#probeSuccesses = 0;
  }

  #close(): void {
    this.#s.window.reset();
    this.#move('closed');
  }

  #move(to: CircuitState): void {
    const from = this.#state;
    this.#state = to;
    this.#generation++;
    if (this.#changed.size > 0) this.#changed.emit({ from, to });
  }

  #restore(initial: CircuitBreakerState): void {
    const saved = initial as Partial<CircuitBreakerState> | null;
    const state = typeof saved === 'object' && saved !== null ? saved.state : undefined;
    const now = this.#clock.now();
    if (state === 'closed') {
      if (saved!.window !== undefined) this.#s.window.restore(saved!.window, now);
    } else if (state === 'open') {
      const until = saved!.openUntilWallMs;
      if (typeof until !== 'number' || Number.isNaN(until)) {
        throw new SpillwayConfigError(
          'initialState.openUntilWallMs',
          'a wall-clock time in ms',
          until,
        );
      }
      // Never longer than one cool-down from now, whatever a stale or hostile save says.
      const left = Math.min(until - this.#clock.wallNow(), this.#s.openMs);
      this.#state = 'open';
      this.#openUntil = now + Math.max(0, left);
    } else if (state === 'half-open') {
      this.#state = 'half-open';
      this.#startProbes(now);
    } else {
      throw new SpillwayConfigError(
        'initialState',
        "a saved state ({ state: 'closed' | 'open' | 'half-open' })",
        initial,
      );
    }
  }
}
