/**
 * When a closed breaker opens: after `failures` consecutive failures, or when the failure
 * ratio over the last `size` calls (count window) or the last `windowMs` (time window) reaches
 * `failureRatio` once at least `minimumCalls` were seen. Each window is bounded: a counter, a
 * ring of `size` bytes, or a fixed set of time slices.
 *
 * @module
 */
import { SpillwayConfigError } from '../errors/config-error.js';
import { SlicedWindow } from '../internal/sliced-window.js';
import { numberInRange, optionsObject, positiveInteger } from '../internal/validate.js';

/** Open after this many failures in a row. */
export interface ConsecutiveTrip {
  readonly kind: 'consecutive';
  /** Failures in a row that open the breaker. @default 5 */
  readonly failures?: number;
}

/** Open when the failure ratio over the last `size` calls reaches `failureRatio`. */
export interface CountTrip {
  readonly kind: 'count';
  /** Calls in the window, at most 10,000. @default 100 */
  readonly size?: number;
  /** Calls needed before the ratio counts (at most `size`). @default size */
  readonly minimumCalls?: number;
  /** Failure share that opens the breaker, in (0, 1]. @default 0.5 */
  readonly failureRatio?: number;
}

/** Open when the failure ratio over the last `windowMs` reaches `failureRatio`. */
export interface TimeTrip {
  readonly kind: 'time';
  /** Length of the window, in ms (kept in 10–60 slices). @default 30_000 */
  readonly windowMs?: number;
  /** Calls needed in the window before the ratio counts. @default 100 */
  readonly minimumCalls?: number;
  /** Failure share that opens the breaker, in (0, 1]. @default 0.1 */
  readonly failureRatio?: number;
}

/** How a closed breaker decides to open. */
export type TripPolicy = ConsecutiveTrip | CountTrip | TimeTrip;

/** A window's counts, as saved by `toJSON` (outcomes oldest first, 1 = failure). */
export type TripSnapshot =
  | { readonly kind: 'consecutive'; readonly failures: number }
  | { readonly kind: 'count'; readonly outcomes: readonly number[] }
  | { readonly kind: 'time'; readonly calls: number; readonly failures: number };

/** The closed state's memory of recent outcomes. */
export interface TripWindow {
  /** Records one outcome; true when the breaker should open now. */
  record(failure: boolean, now: number): boolean;
  reset(): void;
  snapshot(now: number): TripSnapshot;
  restore(snapshot: TripSnapshot, now: number): void;
}

class Consecutive implements TripWindow {
  #failures = 0;
  readonly #threshold: number;
  constructor(threshold: number) {
    this.#threshold = threshold;
  }
  record(failure: boolean): boolean {
    this.#failures = failure ? this.#failures + 1 : 0;
    return this.#failures >= this.#threshold;
  }
  reset(): void {
    this.#failures = 0;
  }
  snapshot(): TripSnapshot {
    return { kind: 'consecutive', failures: this.#failures };
  }
  restore(s: TripSnapshot): void {
    if (s.kind === 'consecutive' && Number.isSafeInteger(s.failures) && s.failures >= 0) {
      this.#failures = Math.min(s.failures, this.#threshold - 1);
    }
  }
}

class CountWindow implements TripWindow {
  readonly #ring: Uint8Array;
  readonly #minimumCalls: number;
  readonly #ratio: number;
  #next = 0;
  #calls = 0;
  #failures = 0;
  constructor(size: number, minimumCalls: number, ratio: number) {
    this.#ring = new Uint8Array(size);
    this.#minimumCalls = minimumCalls;
    this.#ratio = ratio;
  }
  record(failure: boolean): boolean {
    const ring = this.#ring;
    if (this.#calls === ring.length) this.#failures -= ring[this.#next]!;
    else this.#calls++;
    ring[this.#next] = failure ? 1 : 0;
    if (failure) this.#failures++;
    this.#next = (this.#next + 1) % ring.length;
    return (
      failure && this.#calls >= this.#minimumCalls && this.#failures >= this.#ratio * this.#calls
    );
  }
  reset(): void {
    this.#ring.fill(0);
    this.#next = 0;
    this.#calls = 0;
    this.#failures = 0;
  }
  snapshot(): TripSnapshot {
    const ring = this.#ring;
    const outcomes: number[] = [];
    const start = this.#calls === ring.length ? this.#next : 0;
    for (let i = 0; i < this.#calls; i++) outcomes.push(ring[(start + i) % ring.length]!);
    return { kind: 'count', outcomes };
  }
  restore(s: TripSnapshot): void {
    if (s.kind !== 'count' || !Array.isArray(s.outcomes)) return;
    this.reset();
    for (const o of s.outcomes.slice(-this.#ring.length)) this.record(o === 1);
  }
}

class TimeWindow implements TripWindow {
  readonly #window: SlicedWindow;
  readonly #minimumCalls: number;
  readonly #ratio: number;
  constructor(s: { windowMs: number; minimumCalls: number; ratio: number; now: number }) {
    const slices = Math.min(60, Math.max(10, Math.ceil(s.windowMs / 1_000)));
    this.#window = new SlicedWindow({
      sliceMs: s.windowMs / slices,
      slices,
      counters: 2,
      now: s.now,
    });
    this.#minimumCalls = s.minimumCalls;
    this.#ratio = s.ratio;
  }
  record(failure: boolean, now: number): boolean {
    const w = this.#window;
    w.add(0, 1, now);
    if (!failure) return false;
    w.add(1, 1, now);
    const calls = w.sum(0, now);
    return calls >= this.#minimumCalls && w.sum(1, now) >= this.#ratio * calls;
  }
  reset(): void {
    this.#window.clear();
  }
  snapshot(now: number): TripSnapshot {
    return { kind: 'time', calls: this.#window.sum(0, now), failures: this.#window.sum(1, now) };
  }
  restore(s: TripSnapshot, now: number): void {
    if (s.kind !== 'time') return;
    const calls = Number.isSafeInteger(s.calls) && s.calls > 0 ? s.calls : 0;
    const failures = Number.isSafeInteger(s.failures) && s.failures > 0 ? s.failures : 0;
    this.reset();
    this.#window.add(0, calls, now);
    this.#window.add(1, Math.min(failures, calls), now);
  }
}

/** Any policy's fields, seen before the kind is checked. */
interface AnyTrip {
  readonly kind?: unknown;
  readonly failures?: unknown;
  readonly size?: unknown;
  readonly minimumCalls?: unknown;
  readonly failureRatio?: unknown;
  readonly windowMs?: unknown;
}

/** Validates a trip policy and builds its window. */
export function tripWindow(policy: TripPolicy | undefined, now: number): TripWindow {
  const p: AnyTrip = optionsObject('trip', policy ?? { kind: 'consecutive' });
  switch (p.kind) {
    case 'consecutive':
      return new Consecutive(positiveInteger('trip.failures', p.failures ?? 5));
    case 'count': {
      const size = positiveInteger('trip.size', p.size ?? 100);
      if (size > 10_000) throw new SpillwayConfigError('trip.size', 'at most 10,000', size);
      const minimumCalls = positiveInteger('trip.minimumCalls', p.minimumCalls ?? size);
      return new CountWindow(size, Math.min(minimumCalls, size), ratioOf(p.failureRatio ?? 0.5));
    }
    case 'time': {
      const windowMs = numberInRange('trip.windowMs', p.windowMs ?? 30_000, [100, 3_600_000]);
      const minimumCalls = positiveInteger('trip.minimumCalls', p.minimumCalls ?? 100);
      return new TimeWindow({
        windowMs,
        minimumCalls,
        ratio: ratioOf(p.failureRatio ?? 0.1),
        now,
      });
    }
    default:
      throw new SpillwayConfigError('trip.kind', "one of 'consecutive', 'count', 'time'", p.kind);
  }
}

function ratioOf(value: unknown): number {
  if (typeof value !== 'number' || !(value > 0 && value <= 1)) {
    throw new SpillwayConfigError('trip.failureRatio', 'a number in (0, 1]', value);
  }
  return value;
}
