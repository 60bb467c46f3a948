/**
 * Overload of the event loop itself, which no slot count sees: a CPU-bound handler, a burst of
 * JSON parsing, a long GC. Every `sampleIntervalMs` (default 100) it reads the loop's
 * utilization over that interval only (`performance.eventLoopUtilization` deltas, not since
 * start) and the worst event-loop delay in it (`monitorEventLoopDelay`), and decides whether
 * the loop is saturated: busy for `maxUtilization` of the interval, or delayed past
 * `maxDelayMs` in this interval and the one before. One delay alone is a pause that has ended
 * by the time it is seen (a GC, one slow synchronous call): the loop is free again, and
 * holding the verdict for the next interval would refuse work it can carry. Per request the
 * guard asks {@link EventLoopMonitor.shouldShed}, which
 * costs a few comparisons: while saturated, `sheddable` work is shed; more critical work is
 * refused only while in flight exceeds what the loop has shown it can carry — the largest
 * throughput seen × the smallest latency seen (Little's law; Alibaba Sentinel's check) — or
 * when it reaches the guard more than `maxTurnMs` into the current turn of the loop, instead
 * of refusing everything for a whole sample as @fastify/under-pressure does. The second is for
 * synchronous, CPU-bound handlers: each finishes before the next request is read, so in flight
 * stays at 0 or 1 while the requests queue in the socket buffers, and are read one after
 * another in one long turn; the ones read late in it have waited that long already. Each turn
 * serves `maxTurnMs` of work and refuses what it reads after that, cheaply, so the callers get
 * an answer within about two turns instead of at their deadline.
 *
 * @module
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization } from 'node:perf_hooks';
import {
  criticalityRank,
  Emitter,
  SpillwayConfigError,
  systemClock,
  type Clock,
  type Criticality,
  type Event,
  type TimerHandle,
} from '../index.js';
import {
  clockLike,
  nonNegativeNumber,
  numberInRange,
  oneOf,
  optionsObject,
  positiveNumber,
} from '../core/internal/validate.js';

/** Options of {@link eventLoopMonitor}. */
export interface EventLoopMonitorOptions {
  /** How often the loop is sampled, in ms. @default 100 */
  readonly sampleIntervalMs?: number;
  /** Utilization (0–1) over one interval at or above which the loop is saturated. @default 0.9 */
  readonly maxUtilization?: number;
  /**
   * Worst event-loop delay in one interval, in ms, at or above which the loop is saturated
   * when the interval before it was overloaded too (a single pause is over once seen).
   * @default 50
   */
  readonly maxDelayMs?: number;
  /**
   * While the loop is saturated, how long a `critical` request may have waited in one turn of
   * it (behind a synchronous, CPU-bound handler) before it is refused; `critical-plus` twice as
   * long, `sheddable-plus` half. Shorter turns answer the refused sooner. `Infinity` turns this
   * rule off (the loop's other rules still hold): for a server whose handlers never run long
   * on the loop and whose callers would rather wait than be refused. @default 20
   */
  readonly maxTurnMs?: number;
  /** Work this critical or less is shed whenever the loop is saturated. @default 'sheddable' */
  readonly shedFrom?: Criticality;
  /** How far back throughput and latency count towards the safe in-flight level, in ms. @default 1_000 */
  readonly windowMs?: number;
  /** Where time and the sampling timer come from. @default systemClock */
  readonly clock?: Clock;
}

/** What one sample saw; emitted by {@link EventLoopMonitor.onSample}. */
export interface EventLoopSample {
  /** Share of the interval the loop spent running code, 0–1. */
  readonly utilization: number;
  /** Worst delay of the loop in the interval, in ms. */
  readonly delayMs: number;
  readonly saturated: boolean;
  /** In-flight work the loop has shown it can carry; Infinity until something completed. */
  readonly safeInflight: number;
}

/** The event-loop overload signal. Feed it completions; ask it per request. */
export interface EventLoopMonitor extends Disposable {
  /**
   * Whether to refuse a new request now. `inflight` is the work in progress, not counting this
   * request. While the loop is saturated: `shedFrom` and less critical work is refused; other
   * work only while `inflight > 1` and `inflight > safeInflight`, or when it is asked about more
   * than `maxTurnMs` after the first request of the same turn of the event loop (it has waited
   * that long for the CPU; twice that for `critical-plus`, half for `sheddable-plus`). Never
   * while it is not.
   */
  shouldShed(criticality: Criticality | undefined, inflight: number): boolean;
  /** Reports a finished request and how long it took (arrival to response), in ms. */
  onComplete(latencyMs: number): void;
  /** Whether the last sample found the loop saturated. */
  readonly saturated: boolean;
  /** Utilization in the last interval, 0–1. */
  readonly utilization: number;
  /** Worst event-loop delay in the last interval, in ms. */
  readonly delayMs: number;
  /** Largest throughput × smallest latency over `windowMs`; Infinity with no completions. */
  readonly safeInflight: number;
  readonly onSample: Event<EventLoopSample>;
  /** Stops sampling. Idempotent. */
  close(): void;
}

/** Where the loop's numbers come from; the real one reads perf_hooks. Internal seam for tests. */
export interface LoopProbe {
  /** Utilization and worst delay (ms) since the previous call. */
  read(): { readonly utilization: number; readonly delayMs: number };
  close(): void;
}

/**
 * Per criticality rank, how many `maxTurnMs` a request may have waited in one turn of a
 * saturated loop: `critical-plus` twice as long as `critical`, `sheddable-plus` half as long
 * (`sheddable` only reaches it when `shedFrom` lets it by).
 */
const turnAllowance: readonly number[] = [2, 1, 0.5, 0.25];

const defaults = {
  sampleIntervalMs: 100,
  maxUtilization: 0.9,
  maxDelayMs: 50,
  maxTurnMs: 20,
  shedFrom: 'sheddable',
  windowMs: 1_000,
} as const;

/**
 * Starts monitoring the event loop. The timer is unref'd: it never keeps a process alive.
 *
 * @example
 * using loop = eventLoopMonitor();
 * if (loop.shouldShed(criticality, inFlight)) return reply503();
 * const started = performance.now();
 * res.on('finish', () => loop.onComplete(performance.now() - started));
 */
export function eventLoopMonitor(options?: EventLoopMonitorOptions): EventLoopMonitor {
  const o = optionsObject('eventLoopMonitor options', options);
  const interval = positiveNumber(
    'sampleIntervalMs',
    o.sampleIntervalMs ?? defaults.sampleIntervalMs,
  );
  // A delay sample every tenth of an interval at most, and never coarser than 10 ms.
  const resolutionMs = Math.max(1, Math.min(10, Math.floor(interval / 5)));
  return monitorWith(realProbe(resolutionMs), options);
}

/** {@link eventLoopMonitor} over any probe. Internal: for tests. */
export function monitorWith(probe: LoopProbe, options?: EventLoopMonitorOptions): EventLoopMonitor {
  const o = optionsObject('eventLoopMonitor options', options);
  const sampleIntervalMs = positiveNumber(
    'sampleIntervalMs',
    o.sampleIntervalMs ?? defaults.sampleIntervalMs,
  );
  const windowMs = positiveNumber('windowMs', o.windowMs ?? defaults.windowMs);
  const criticalities = ['critical-plus', 'critical', 'sheddable-plus', 'sheddable'] as const;
  return new Monitor(probe, {
    sampleIntervalMs,
    maxUtilization: numberInRange(
      'maxUtilization',
      o.maxUtilization ?? defaults.maxUtilization,
      [0, 1],
    ),
    maxDelayMs: nonNegativeNumber('maxDelayMs', o.maxDelayMs ?? defaults.maxDelayMs),
    maxTurnMs: turnBound(o.maxTurnMs ?? defaults.maxTurnMs),
    shedFromRank: criticalityRank(
      oneOf('shedFrom', o.shedFrom ?? defaults.shedFrom, criticalities),
    ),
    buckets: Math.max(1, Math.ceil(windowMs / sampleIntervalMs)),
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

function realProbe(resolutionMs: number): LoopProbe {
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    read() {
      const now = performance.eventLoopUtilization();
      const { utilization } = performance.eventLoopUtilization(now, last);
      last = now;
      // The histogram records the whole gap between its timer's runs; the resolution is expected.
      const worst = histogram.count > 0 ? histogram.max / 1e6 - resolutionMs : 0;
      histogram.reset();
      return { utilization, delayMs: worst > 0 ? worst : 0 };
    },
    close() {
      histogram.disable();
    },
  };
}

interface Settings {
  readonly sampleIntervalMs: number;
  readonly maxUtilization: number;
  readonly maxDelayMs: number;
  readonly maxTurnMs: number;
  readonly shedFromRank: number;
  readonly buckets: number;
  readonly clock: Clock;
}

class Monitor implements EventLoopMonitor {
  readonly #probe: LoopProbe;
  readonly #s: Settings;
  readonly #clock: Clock;
  readonly #sampled = new Emitter<EventLoopSample>();
  readonly onSample = this.#sampled.event;
  // One bucket per past interval: completions per ms and mean latency (NaN when empty).
  readonly #throughput: Float64Array;
  readonly #latency: Float64Array;
  #next = 0;
  #count = 0;
  #latencySum = 0;
  #timer: TimerHandle | undefined;
  #lastTickAt: number;
  /** Whether the interval before the last was busy or delayed. */
  #wasOverloaded = false;
  /** Whether a turn of the loop is being timed (see `#turnWaitMs`), and since when. */
  #inTurn = false;
  #turnStartedAt = 0;
  saturated = false;
  utilization = 0;
  delayMs = 0;
  safeInflight = Infinity;

  constructor(probe: LoopProbe, settings: Settings) {
    this.#probe = probe;
    this.#s = settings;
    this.#clock = settings.clock;
    this.#throughput = new Float64Array(settings.buckets);
    this.#latency = new Float64Array(settings.buckets).fill(Number.NaN);
    this.#lastTickAt = this.#clock.now();
    this.#arm();
  }

  shouldShed(criticality: Criticality | undefined, inflight: number): boolean {
    if (!this.saturated) return false;
    const rank = criticality === undefined ? 1 : criticalityRank(criticality);
    if (rank >= this.#s.shedFromRank) return true;
    if (inflight > 1 && inflight > this.safeInflight) return true;
    // Work done on the loop itself (a synchronous, CPU-bound handler) is never in flight when
    // the next request is asked about: its requests wait in the socket buffers instead, and
    // reach the guard one after another in one long turn of the loop. How long this turn has
    // run is how long they have waited for the CPU, at least; the least critical go first.
    if (this.#s.maxTurnMs === Infinity) return false;
    return this.#turnWaitMs() > this.#s.maxTurnMs * turnAllowance[rank]!;
  }

  /** Ms since the first request of this turn of the event loop was asked about (0 for it). */
  #turnWaitMs(): number {
    const now = this.#clock.now();
    if (!this.#inTurn) {
      this.#inTurn = true;
      this.#turnStartedAt = now;
      // Runs once the loop has gone through everything that was ready (the check phase).
      setImmediate(this.#endTurn);
      return 0;
    }
    return now - this.#turnStartedAt;
  }

  readonly #endTurn = (): void => {
    this.#inTurn = false;
  };

  onComplete(latencyMs: number): void {
    if (!(latencyMs >= 0 && latencyMs < Infinity)) return;
    this.#count++;
    this.#latencySum += latencyMs;
  }

  close(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#probe.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #arm(): void {
    this.#timer = this.#clock.setTimer(this.#s.sampleIntervalMs, () => this.#tick(), {
      unref: true,
    });
  }

  #tick(): void {
    const s = this.#s;
    const now = this.#clock.now();
    // A tick that fired late shows a blocked loop even if the histogram missed it.
    const lateMs = now - this.#lastTickAt - s.sampleIntervalMs;
    const elapsedMs = now - this.#lastTickAt;
    this.#lastTickAt = now;
    const { utilization, delayMs } = this.#probe.read();
    this.utilization = utilization;
    this.delayMs = Math.max(delayMs, lateMs > 0 ? lateMs : 0);
    const busy = utilization >= s.maxUtilization;
    const delayed = this.delayMs >= s.maxDelayMs;
    this.saturated = busy || (delayed && this.#wasOverloaded);
    this.#wasOverloaded = busy || delayed;
    this.#closeBucket(elapsedMs);
    this.#arm();
    if (this.#sampled.size > 0) {
      this.#sampled.emit({
        utilization,
        delayMs: this.delayMs,
        saturated: this.saturated,
        safeInflight: this.safeInflight,
      });
    }
  }

  /** Files this interval's completions and re-estimates the safe in-flight level. */
  #closeBucket(elapsedMs: number): void {
    const i = this.#next;
    this.#throughput[i] = elapsedMs > 0 ? this.#count / elapsedMs : 0;
    this.#latency[i] = this.#count > 0 ? this.#latencySum / this.#count : Number.NaN;
    this.#next = (i + 1) % this.#s.buckets;
    this.#count = 0;
    this.#latencySum = 0;
    let maxThroughput = 0;
    let minLatency = Infinity;
    for (let b = 0; b < this.#s.buckets; b++) {
      if (this.#throughput[b]! > maxThroughput) maxThroughput = this.#throughput[b]!;
      const latency = this.#latency[b]!;
      if (latency < minLatency) minLatency = latency; // NaN never compares less
    }
    this.safeInflight = minLatency === Infinity ? Infinity : maxThroughput * minLatency;
  }
}

/** `maxTurnMs`: a finite number of 0 or more, or `Infinity` (the turn rule off). */
function turnBound(value: unknown): number {
  if (value === Infinity) return Infinity;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new SpillwayConfigError('maxTurnMs', 'a number of 0 or more, or Infinity (off)', value);
  }
  return value;
}
