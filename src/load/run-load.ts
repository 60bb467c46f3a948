/**
 * The open-loop generator. Arrivals follow a schedule that ignores the server (constant or
 * Poisson, per group); each request's latency runs from the moment it *should* have been sent,
 * so a generator that falls behind, or a connection that is slow to open, shows up as latency
 * instead of disappearing (coordinated omission). Every request ends as exactly one outcome.
 *
 * A run is four rooms wired here: the arrival schedule (`schedule.ts`), the requests in flight
 * and their connections (`in-flight.ts`), the measurement windows (`windows.ts`, with the CPU
 * meter) and the result (`build-result.ts`). This file owns only the run's life: warm-up,
 * measured schedule, drain, end.
 *
 * @module
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { buildResult } from './build-result.js';
import { CpuMeter } from './cpu-meter.js';
import { InFlight } from './in-flight.js';
import { resolveOptions, type LoadOptions, type ResolvedOptions } from './options.js';
import { GroupRecorder } from './recorder.js';
import type { LoadResult } from './result.js';
import { Schedule, type Arrival } from './schedule.js';
import { armTimer } from './timer.js';
import { MeasurementWindows, type WindowGauges } from './windows.js';

/**
 * Runs one open-loop load test and resolves with its measurements. Rejects only for bad
 * options or an unresolvable host; every failure of the target is an outcome, not an error.
 *
 * @example
 * ```ts
 * const result = await runLoad({ url: 'http://127.0.0.1:3000/', ratePerSec: 500, durationMs: 5000, deadlineMs: 1000 });
 * console.log(result.totals.goodputPerSec, result.totals.latencyMs.ok?.p99, result.validity.valid);
 * ```
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const resolved = resolveOptions(options);
  const host = isIP(resolved.host) === 0 ? (await lookup(resolved.host)).address : resolved.host;
  const run = new LoadRun(resolved, options, host);
  await run.warm();
  return run.run();
}

class LoadRun implements WindowGauges {
  readonly #o: ResolvedOptions;
  readonly #signal: AbortSignal | undefined;
  readonly #recorders: readonly GroupRecorder[];
  readonly #windows: MeasurementWindows;
  readonly #inFlight: InFlight;
  readonly #schedule: Schedule;
  readonly #cpu = new CpuMeter();
  /** The measured start on `performance.now()`'s clock; the warm-up is the time before it. */
  #t0 = 0;
  #ended = false;
  #aborted = false;
  #measureTimer: NodeJS.Timeout | undefined;
  #drainTimer: NodeJS.Timeout | undefined;
  #resolve: (result: LoadResult) => void = () => undefined;

  constructor(options: ResolvedOptions, input: LoadOptions, address: string) {
    this.#o = options;
    this.#signal = input.signal;
    const now = this.#now;
    this.#recorders = options.groups.map((g) => new GroupRecorder(g.name, g.ratePerSec));
    this.#windows = new MeasurementWindows({
      options,
      recorders: this.#recorders,
      now,
      gauges: this,
      onBoundary: this.#onWindowBoundary,
      onWindow: input.onWindow,
    });
    this.#schedule = new Schedule({
      options,
      now,
      windows: this.#windows,
      onArrival: this.#onArrival,
      onEnd: this.#endSchedule,
    });
    this.#inFlight = new InFlight({
      options,
      target: { host: address, port: options.port },
      recorders: this.#recorders,
      now,
      onOk: this.#windows.ok,
      onAnswer: () => this.#schedule.sendWhileReading(),
      onIdle: this.#end,
      lastSendMs: this.#schedule.endMs + options.drainMs,
    });
  }

  /** Opens the warm connections (bounded in time; failures surface later as outcomes). */
  warm(): Promise<void> {
    return this.#inFlight.pool.warm(this.#o.warmConnections, 5000, -this.#o.warmupMs);
  }

  run(): Promise<LoadResult> {
    return new Promise((resolve) => {
      this.#resolve = resolve;
      // Time runs from the measured start; the warm-up, if any, is the time before it.
      this.#t0 = performance.now() + this.#o.warmupMs;
      if (this.#o.warmupMs > 0) {
        this.#measureTimer = armTimer(this.#startMeasuring, this.#o.warmupMs);
      } else this.#startMeasuring();
      this.#windows.start();
      const signal = this.#signal;
      if (signal?.aborted === true) {
        this.#abort();
        return;
      }
      signal?.addEventListener('abort', this.#abort, { once: true });
      this.#schedule.start();
    });
  }

  readonly #now = (): number => performance.now() - this.#t0;

  get inFlight(): number {
    return this.#inFlight.count;
  }

  get connections(): number {
    return this.#inFlight.pool.open;
  }

  windowClosed(now: number): void {
    this.#cpu.sample();
    this.#inFlight.pool.sweep(now);
  }

  readonly #onArrival = (arrival: Arrival, now: number): void => {
    if (!arrival.warm) this.#windows.arrived(arrival.group.index, now - arrival.intendedAt);
    this.#inFlight.admit(arrival, now);
  };

  /** While sending, the tick closes the window (after what is still due in it). */
  readonly #onWindowBoundary = (): void => {
    if (this.#schedule.done) this.#windows.close();
    else this.#schedule.tickNow();
  };

  readonly #startMeasuring = (): void => {
    this.#measureTimer = undefined;
    this.#cpu.start();
  };

  readonly #abort = (): void => {
    if (this.#schedule.done) return;
    this.#aborted = true;
    this.#endSchedule();
  };

  readonly #endSchedule = (): void => {
    if (this.#schedule.done) return;
    this.#schedule.stop();
    this.#signal?.removeEventListener('abort', this.#abort);
    if (this.#measureTimer === undefined) this.#cpu.stop(this.#now());
    else {
      // Aborted in the warm-up: nothing was measured.
      clearTimeout(this.#measureTimer);
      this.#startMeasuring();
    }
    if (this.#inFlight.count === 0) {
      this.#end();
      return;
    }
    const now = this.#now();
    this.#inFlight.drainUntil(now + this.#o.drainMs, now);
    if (!this.#ended) this.#drainTimer = armTimer(this.#end, this.#o.drainMs);
  };

  /** Ends the run: whatever is still in flight has run out of time. */
  readonly #end = (): void => {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#drainTimer);
    this.#windows.stop();
    clearTimeout(this.#measureTimer);
    const now = this.#now();
    const inFlight = this.#inFlight;
    inFlight.endAll(now);
    this.#windows.close();
    inFlight.pool.close();
    const windows = this.#windows;
    this.#resolve(
      buildResult({
        options: this.#o,
        recorders: this.#recorders,
        lag: windows.lag,
        windows: windows.windows,
        windowsDropped: windows.windowsDropped,
        startedAt: this.#cpu.startedAt,
        elapsedMs: now,
        aborted: this.#aborted,
        cpuPercent: this.#cpu.percent,
        machineIdlePercent: this.#cpu.machineIdlePercent,
        machineLeastIdlePercent: this.#cpu.leastIdlePercent,
        peakConnections: inFlight.pool.peak,
        connectionsOpened: inFlight.pool.opened,
        staleReconnects: inFlight.staleReconnects,
      }),
    );
  };
}
