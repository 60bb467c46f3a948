/**
 * Memory pressure, which neither a slot count nor the event loop sees: a heap or a resident
 * set growing towards the process's limit, where the next allocations end in a long GC or an
 * out-of-memory kill. Every `sampleIntervalMs` (default 250) it reads the heap in use and the
 * resident set size and decides whether the process is over either bound. Per request the
 * guard asks {@link MemoryMonitor.shouldShed}: while over, `sheddable` work (and whatever
 * `shedFrom` names) is shed, and more critical work is let in only as work already in flight
 * finishes — in flight may not grow past what it was when the pressure was first seen, since
 * each admitted request holds memory of its own. Never a refusal of everything for a whole
 * sample, as @fastify/under-pressure's `maxHeapUsedBytes` does.
 *
 * @module
 */
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
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from '../core/internal/validate.js';

/** Options of {@link memoryMonitor}; at least one of the two bounds. */
export interface MemoryMonitorOptions {
  /** Heap in use (`process.memoryUsage().heapUsed`) at or above which the process is under pressure, in bytes. */
  readonly maxHeapUsedBytes?: number;
  /** Resident set size (`process.memoryUsage.rss()`) at or above which it is, in bytes. */
  readonly maxRssBytes?: number;
  /** How often memory is read, in ms. @default 250 */
  readonly sampleIntervalMs?: number;
  /** Work this critical or less is shed while under pressure. @default 'sheddable' */
  readonly shedFrom?: Criticality;
  /** Where time and the sampling timer come from. @default systemClock */
  readonly clock?: Clock;
}

/** What one sample read; emitted by {@link MemoryMonitor.onSample}. */
export interface MemorySample {
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  readonly underPressure: boolean;
}

/** The memory-pressure signal. Ask it per request. */
export interface MemoryMonitor extends Disposable {
  /**
   * Whether to refuse a new request now; `inflight` is the work in progress, not counting this
   * request. Under pressure: `shedFrom` and less critical work is refused; other work while
   * `inflight > 1` and in flight is at or above where it stood when the pressure began.
   * Never when not under pressure.
   */
  shouldShed(criticality: Criticality | undefined, inflight: number): boolean;
  /** Whether the last sample was over a bound. */
  readonly underPressure: boolean;
  /** The last sample's heap in use and resident set, in bytes (0 before the first sample). */
  readonly heapUsedBytes: number;
  readonly rssBytes: number;
  readonly onSample: Event<MemorySample>;
  /** Stops sampling. Idempotent. */
  close(): void;
}

/** Where the numbers come from; the real one reads `process.memoryUsage`. Internal seam for tests. */
export type MemoryProbe = () => { readonly heapUsedBytes: number; readonly rssBytes: number };

const criticalities = ['critical-plus', 'critical', 'sheddable-plus', 'sheddable'] as const;

/**
 * Starts watching memory. The timer is unref'd: it never keeps a process alive.
 *
 * @example
 * using memory = memoryMonitor({ maxHeapUsedBytes: 1_500_000_000 });
 * if (memory.shouldShed(criticality, inFlight)) return reply503();
 */
export function memoryMonitor(options: MemoryMonitorOptions): MemoryMonitor {
  return memoryMonitorWith(realProbe, options);
}

/** {@link memoryMonitor} over any probe. Internal: for tests. */
export function memoryMonitorWith(
  probe: MemoryProbe,
  options: MemoryMonitorOptions,
): MemoryMonitor {
  const o = optionsObject('memoryMonitor options', options);
  const bound = (name: 'maxHeapUsedBytes' | 'maxRssBytes'): number =>
    o[name] === undefined ? Infinity : positiveInteger(name, o[name]);
  const maxHeapUsedBytes = bound('maxHeapUsedBytes');
  const maxRssBytes = bound('maxRssBytes');
  if (maxHeapUsedBytes === Infinity && maxRssBytes === Infinity) {
    throw new SpillwayConfigError(
      'maxHeapUsedBytes',
      'a number of bytes (or maxRssBytes, or both): a memory monitor needs a bound',
      undefined,
    );
  }
  return new Monitor(probe, {
    maxHeapUsedBytes,
    maxRssBytes,
    sampleIntervalMs: positiveNumber('sampleIntervalMs', o.sampleIntervalMs ?? 250),
    shedFromRank: criticalityRank(oneOf('shedFrom', o.shedFrom ?? 'sheddable', criticalities)),
    clock: clockLike('clock', o.clock ?? systemClock),
  });
}

function realProbe(): { heapUsedBytes: number; rssBytes: number } {
  const usage = process.memoryUsage();
  return { heapUsedBytes: usage.heapUsed, rssBytes: usage.rss };
}

interface Settings {
  readonly maxHeapUsedBytes: number;
  readonly maxRssBytes: number;
  readonly sampleIntervalMs: number;
  readonly shedFromRank: number;
  readonly clock: Clock;
}

class Monitor implements MemoryMonitor {
  readonly #probe: MemoryProbe;
  readonly #s: Settings;
  readonly #sampled = new Emitter<MemorySample>();
  readonly onSample = this.#sampled.event;
  #timer: TimerHandle | undefined;
  /** In flight when the pressure was first asked about; undefined while there is none. */
  #ceiling: number | undefined;
  underPressure = false;
  heapUsedBytes = 0;
  rssBytes = 0;

  constructor(probe: MemoryProbe, settings: Settings) {
    this.#probe = probe;
    this.#s = settings;
    this.#sample();
  }

  shouldShed(criticality: Criticality | undefined, inflight: number): boolean {
    if (!this.underPressure) return false;
    const rank = criticality === undefined ? 1 : criticalityRank(criticality);
    if (rank >= this.#s.shedFromRank) return true;
    this.#ceiling ??= inflight;
    return inflight > 1 && inflight >= this.#ceiling;
  }

  close(): void {
    if (this.#timer === undefined) return;
    this.#s.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  #sample(): void {
    const s = this.#s;
    const { heapUsedBytes, rssBytes } = this.#probe();
    this.heapUsedBytes = heapUsedBytes;
    this.rssBytes = rssBytes;
    this.underPressure = heapUsedBytes >= s.maxHeapUsedBytes || rssBytes >= s.maxRssBytes;
    if (!this.underPressure) this.#ceiling = undefined;
    this.#timer = s.clock.setTimer(s.sampleIntervalMs, () => this.#sample(), { unref: true });
    if (this.#sampled.size > 0) {
      this.#sampled.emit({ heapUsedBytes, rssBytes, underPressure: this.underPressure });
    }
  }
}
