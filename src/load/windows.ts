/**
 * The measurement windows of a run: schedule lag of every measured arrival, and 1-second
 * windows of counts and percentiles, closed on their boundary exactly and reported through
 * `onWindow` as they close. Memory is bounded: windows past `maxWindows` are counted, not kept.
 *
 * @module
 */
import type { RecordableHistogram } from 'node:perf_hooks';
import { latencyHistogram, percentileMs, recordMs } from './latency-histogram.js';
import type { LoadOptions, ResolvedOptions } from './options.js';
import { emptyCounts, type GroupRecorder } from './recorder.js';
import type { LoadProgress, WindowCounts, WindowStats } from './result.js';
import { armTimer } from './timer.js';

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
  #endMs = 1000;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(input: MeasurementWindowsOptions) {
    this.#now = input.now;
    this.#recorders = input.recorders;
    this.#gauges = input.gauges;
    this.#onBoundary = input.onBoundary;
    this.#onWindow = input.onWindow;
    this.#maxWindows = input.options.maxWindows;
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
    const now = this.#now();
    const index = this.#index++;
    const startMs = index * 1000;
    this.#endMs = startMs + 2000;
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
    };
    if (keep) this.#windows.push(window);
    else this.#windowsDropped++;
    this.#windowOk.reset();
    this.#windowLag.reset();
    gauges.windowClosed(now);
    if (!this.#stopped) this.#timer = armTimer(this.#onTimer, this.#endMs - this.#now());
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
  }
}
