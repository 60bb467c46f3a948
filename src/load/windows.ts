/**
 * The measurement windows of a run: schedule lag of every measured arrival, and 1-second
 * windows of counts and percentiles, closed on their boundary exactly and reported through
 * `onWindow` as they close. A short run's windows also hold their quarters (steps), so a 5 s
 * run draws as 20 points rather than 5. Memory is bounded: windows past `maxWindows` are
 * counted, not kept, and steps stop at `maxSteps` (fewer with many groups).
 *
 * @module
 */
import type { RecordableHistogram } from 'node:perf_hooks';
import { latencyHistogram, percentileMs, recordMs } from './latency-histogram.js';
import type { LoadOptions, ResolvedOptions } from './options.js';
import { emptyCounts, type GroupRecorder } from './recorder.js';
import type { LoadProgress, WindowCounts, WindowStats, WindowStep } from './result.js';
import { armTimer } from './timer.js';

/** A window's length (the last one of a run may be shorter). */
export const windowMs = 1000;
/** A step's length: a quarter of a window. */
export const stepMs = 250;
/** Runs up to this long (their schedule) keep steps; a longer one has enough windows to draw. */
const shortRunMs = 30_000;
/** Steps kept in a run at most (2 minutes: a short run and its drain). */
const maxSteps = 480;
/** Step × group counts kept in a run at most: a run with many groups keeps fewer steps. */
const maxStepCounts = 20_000;

/** What a closing window reads of the rest of the run, and tells it. */
export interface WindowGauges {
  /** Requests in flight now (those waiting to retry included). */
  readonly inFlight: number;
  /** Connections open now. */
  readonly connections: number;
  /** A window has closed (the pool closes surplus idle connections then). */
  windowClosed(now: number): void;
}

/** Options of {@link MeasurementWindows}. */
export interface MeasurementWindowsOptions {
  readonly options: ResolvedOptions;
  /** One per group, in the order of `options.groups`. */
  readonly recorders: readonly GroupRecorder[];
  /** The run's clock: ms after the measured start. */
  readonly now: () => number;
  readonly gauges: WindowGauges;
  /** A window's end has come (ms granularity; never early). */
  readonly onBoundary: () => void;
  readonly onWindow: LoadOptions['onWindow'];
}

export class MeasurementWindows {
  readonly #now: () => number;
  readonly #recorders: readonly GroupRecorder[];
  readonly #gauges: WindowGauges;
  readonly #onBoundary: () => void;
  readonly #onWindow: LoadOptions['onWindow'];
  readonly #maxWindows: number;
  /** Schedule lag of every measured arrival. */
  readonly lag: RecordableHistogram = latencyHistogram();
  readonly #windowLag = latencyHistogram();
  readonly #windowOk = latencyHistogram();
  readonly #windows: WindowStats[] = [];
  #windowsDropped = 0;
  #index = 0;
  #endMs = windowMs;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** Steps the run may still keep. */
  #stepsLeft: number;
  /** The current window's steps; `undefined` when it keeps none. */
  #steps: WindowStep[] | undefined;
  /** When the current step began (measured, ms after the measured start). */
  #stepStartMs = 0;
  readonly #stepOk = latencyHistogram();
  #stepTimer: NodeJS.Timeout | undefined;

  constructor(input: MeasurementWindowsOptions) {
    this.#now = input.now;
    this.#recorders = input.recorders;
    this.#gauges = input.gauges;
    this.#onBoundary = input.onBoundary;
    this.#onWindow = input.onWindow;
    this.#maxWindows = input.options.maxWindows;
    const groups = input.recorders.length;
    this.#stepsLeft =
      input.options.durationMs <= shortRunMs
        ? Math.min(maxSteps, Math.floor(maxStepCounts / Math.max(groups, 1)))
        : 0;
    this.#steps = this.#stepWindow();
  }

  /** When the current window ends (ms after the measured start). */
  get endMs(): number {
    return this.#endMs;
  }

  /** The windows kept, in order. */
  get windows(): readonly WindowStats[] {
    return this.#windows;
  }

  /** Windows past `maxWindows`, counted but not kept. */
  get windowsDropped(): number {
    return this.#windowsDropped;
  }

  /** Arms the first window's timer (the run's clock must be running). */
  start(): void {
    this.#timer = armTimer(this.#onTimer, this.#endMs - this.#now());
    this.#armStep(this.#now());
  }

  /** A measured arrival of group `group`, sent `lagMs` after its intended time (or dropped). */
  arrived(group: number, lagMs: number): void {
    this.#recorders[group]!.offered();
    recordMs(this.lag, lagMs);
    recordMs(this.#windowLag, lagMs);
  }

  /** A request ended `ok`, `latencyMs` after its intended send time. */
  readonly ok = (latencyMs: number): void => {
    recordMs(this.#windowOk, latencyMs);
    if (this.#steps !== undefined) recordMs(this.#stepOk, latencyMs);
  };

  /** Timers may fire a little early (ms granularity) or late: close on the boundary exactly. */
  readonly #onTimer = (): void => {
    const early = this.#endMs - this.#now();
    if (early > 0) {
      this.#timer = armTimer(this.#onTimer, early);
      return;
    }
    this.#onBoundary();
  };

  /** Closes one 1-second window: totals of every group, and the window's percentiles. */
  close(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#stepTimer);
    const now = this.#now();
    const steps = this.#steps;
    if (steps !== undefined) this.#closeStep(steps, now);
    const index = this.#index++;
    const startMs = index * windowMs;
    this.#endMs = startMs + 2 * windowMs;
    const counts = emptyCounts();
    for (const r of this.#recorders) {
      for (const key of Object.keys(counts) as (keyof WindowCounts)[]) counts[key] += r.window[key];
    }
    const keep = this.#windows.length < this.#maxWindows;
    for (const r of this.#recorders) r.closeWindow(keep);
    const gauges = this.#gauges;
    const window: WindowStats = {
      index,
      startMs,
      durationMs: Math.round(Math.min(1000, now - startMs)),
      ...counts,
      okP50Ms: percentileMs(this.#windowOk, 50),
      okP99Ms: percentileMs(this.#windowOk, 99),
      lagP99Ms: percentileMs(this.#windowLag, 99),
      inFlight: gauges.inFlight,
      connections: gauges.connections,
      steps: steps ?? [],
    };
    if (keep) this.#windows.push(window);
    else this.#windowsDropped++;
    this.#windowOk.reset();
    this.#windowLag.reset();
    gauges.windowClosed(now);
    this.#steps = keep ? this.#stepWindow() : undefined;
    if (!this.#stopped) {
      this.#timer = armTimer(this.#onTimer, this.#endMs - this.#now());
      this.#armStep(now);
    }
    const onWindow = this.#onWindow;
    if (onWindow !== undefined) {
      try {
        onWindow({ window, totals: this.#progress(now) });
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  /**
   * The steps of a window about to start, when the run keeps steps and has room for all of the
   * window's (a window's steps add up to it, or it has none).
   */
  #stepWindow(): WindowStep[] | undefined {
    const perWindow = windowMs / stepMs;
    if (this.#stepsLeft < perWindow) return undefined;
    this.#stepsLeft -= perWindow;
    return [];
  }

  /**
   * Arms the timer of the window's next step end after `now`; the window's last step ends when
   * the window closes. A window closed late (after a stall) skips the step ends already past.
   */
  #armStep(now: number): void {
    if (this.#steps === undefined) return;
    const windowStartMs = this.#endMs - windowMs;
    // In the warm-up (now < 0), the first step end is still the next one.
    const passed = Math.max(0, Math.floor((now - windowStartMs) / stepMs));
    const nextEndMs = windowStartMs + (passed + 1) * stepMs;
    if (nextEndMs >= this.#endMs) return;
    this.#stepTimer = armTimer(this.#onStepTimer, nextEndMs - now, nextEndMs);
  }

  readonly #onStepTimer = (endMs: number): void => {
    const now = this.#now();
    if (now < endMs) {
      this.#stepTimer = armTimer(this.#onStepTimer, endMs - now, endMs);
      return;
    }
    this.#closeStep(this.#steps!, now);
    this.#armStep(now);
  };

  /** Closes the current step at `now`: every group's counts since it began, its percentiles. */
  #closeStep(steps: WindowStep[], now: number): void {
    const startMs = this.#stepStartMs;
    steps.push({
      startMs: Math.round(Math.max(0, startMs)),
      durationMs: Math.round(Math.max(0, now - Math.max(0, startMs))),
      okP50Ms: percentileMs(this.#stepOk, 50),
      okP99Ms: percentileMs(this.#stepOk, 99),
      groups: this.#recorders.map((r) => r.closeStep()),
    });
    this.#stepOk.reset();
    this.#stepStartMs = now;
  }

  #progress(now: number): LoadProgress {
    const counts = emptyCounts();
    for (const r of this.#recorders) {
      for (const key of Object.keys(counts) as (keyof WindowCounts)[]) counts[key] += r.totals[key];
    }
    return { ...counts, elapsedMs: Math.round(now), inFlight: this.#gauges.inFlight };
  }

  /** Stops the window timer for good (the run is ending; its last window is closed by hand). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#stepTimer);
  }
}
