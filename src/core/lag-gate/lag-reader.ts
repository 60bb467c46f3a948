/**
 * The lag gate's view of its source: readings cached and rate-limited (one read in flight, at
 * most one started per `pollMs`, a read that outlasts `staleAfterMs` abandoned and its signal
 * aborted), the messages this process admitted since the last reading started, and the drain
 * rate measured between readings. Internal: used by `lagGate`.
 *
 * @module
 */
import type { Clock, TimerHandle } from '../clock/clock.js';

/** What a lag source reports: the consumer's backlog now. */
export interface LagReading {
  /** Messages published and not yet finished by the consumer (waiting plus unacknowledged). */
  readonly messages: number;
  /** Age of the oldest unfinished message, in ms, if the source can tell. */
  readonly oldestAgeMs?: number | undefined;
}

/** What a read is given: a signal that aborts when the gate stops waiting for it. */
export interface LagReadContext {
  /** Aborts when the read has taken `staleAfterMs` (the gate has given up on it). */
  readonly signal: AbortSignal;
}

/** A lag source: reads the consumer's backlog, synchronously or not. */
export type ReadLag = (context: LagReadContext) => LagReading | Promise<LagReading>;

/** A reading as the gate keeps it. */
interface Kept {
  readonly messages: number;
  readonly oldestAgeMs: number | undefined;
  /** When the read started (the reading is at least this old). */
  readonly at: number;
  /** The admitted count when the read started. */
  readonly mark: number;
}

/** Settings of a {@link LagReader}. */
export interface LagReaderSettings {
  readonly readLag: ReadLag;
  readonly clock: Clock;
  readonly pollMs: number;
  readonly staleAfterMs: number;
  /** Called after each read settles, good or not (the gate serves its waiters). */
  readonly settled: () => void;
}

/** Weight of the newest drain-rate sample. */
const drainWeight = 0.3;

function badReading(value: unknown): boolean {
  const r = value as Partial<LagReading> | null;
  if (typeof r !== 'object' || r === null) return true;
  const m = r.messages;
  if (typeof m !== 'number' || !Number.isFinite(m) || m < 0) return true;
  const age = r.oldestAgeMs;
  return age !== undefined && (typeof age !== 'number' || !Number.isFinite(age) || age < 0);
}

/** One lag source's cached readings and the counts kept between them. */
export class LagReader {
  readonly #s: LagReaderSettings;
  readonly #createdAt: number;
  #last: Kept | undefined;
  #admitted = 0;
  #drainPerMs: number | undefined;
  #generation = 0;
  #inFlight = false;
  #startedAt = -Infinity;
  #startMark = 0;
  #lastDurationMs: number | undefined;
  #timer: TimerHandle | undefined;
  #controller: AbortController | undefined;
  /** Why the last read failed, until one succeeds. */
  lastError: unknown = undefined;

  constructor(settings: LagReaderSettings) {
    this.#s = settings;
    this.#createdAt = settings.clock.now();
  }

  /** The backlog as the gate counts it: the last reading plus what was admitted since it began. */
  get estimate(): number | undefined {
    return this.#last === undefined
      ? undefined
      : this.#last.messages + this.#admitted - this.#last.mark;
  }

  /** Age of the oldest message at the last reading, in ms, if the source tells. */
  get oldestAgeMs(): number | undefined {
    return this.#last?.oldestAgeMs;
  }

  /** Measured drain rate, messages per ms; undefined until two readings. */
  get drainPerMs(): number | undefined {
    return this.#drainPerMs;
  }

  /** `fresh`, `unknown` (no reading yet, within `staleAfterMs` of creation) or `stale`. */
  state(now: number): 'fresh' | 'unknown' | 'stale' {
    const since = this.#last === undefined ? this.#createdAt : this.#last.at;
    if (now - since > this.#s.staleAfterMs) return 'stale';
    return this.#last === undefined ? 'unknown' : 'fresh';
  }

  /** Counts `n` messages admitted. */
  admitted(n: number): void {
    this.#admitted += n;
  }

  /** Whole ms (≥ 1) until a reading could change the answer. */
  untilNextReading(now: number): number {
    const { pollMs } = this.#s;
    let due = this.#startedAt + pollMs;
    if (this.#inFlight) {
      const expected = this.#startedAt + (this.#lastDurationMs ?? pollMs);
      due = expected > now ? expected : now + pollMs;
    }
    const ms = Math.ceil(due - now);
    return ms < 1 ? 1 : ms;
  }

  /**
   * Whole ms (≥ 1) until the backlog should be `excess` messages smaller than the estimate, at
   * the measured drain rate counted from the last reading; never sooner than the next reading.
   */
  drainWait(excess: number, now: number): number {
    const next = this.untilNextReading(now);
    const rate = this.#drainPerMs;
    if (rate === undefined || rate <= 0 || this.#last === undefined) return next;
    const ms = Math.ceil(this.#last.at + excess / rate - now);
    return ms > next ? ms : next;
  }

  /** Starts a read unless one is in flight or one started less than `pollMs` ago. */
  refresh(now: number): void {
    if (this.#inFlight || now < this.#startedAt + this.#s.pollMs) return;
    const generation = ++this.#generation;
    this.#inFlight = true;
    this.#startedAt = now;
    this.#startMark = this.#admitted;
    const controller = new AbortController();
    let answer: LagReading | Promise<LagReading>;
    try {
      answer = this.#s.readLag({ signal: controller.signal });
    } catch (error) {
      this.#fail(generation, error);
      return;
    }
    if (typeof (answer as Promise<LagReading> | null)?.then !== 'function') {
      this.#settle(generation, answer as LagReading);
      return;
    }
    this.#controller = controller;
    this.#timer = this.#s.clock.setTimer(this.#s.staleAfterMs, () => this.#abandon(generation), {
      unref: true,
    });
    (answer as Promise<LagReading>).then(
      (reading) => this.#settle(generation, reading),
      (error: unknown) => this.#fail(generation, error),
    );
  }

  #abandon(generation: number): void {
    const controller = this.#controller;
    this.#timer = undefined;
    this.#fail(generation, new Error(`readLag took longer than ${this.#s.staleAfterMs} ms`));
    controller?.abort(new Error('lag read abandoned'));
  }

  #settle(generation: number, reading: LagReading): void {
    if (generation !== this.#generation || !this.#inFlight) return;
    if (badReading(reading)) {
      this.#fail(
        generation,
        new TypeError(
          `readLag returned ${JSON.stringify(reading) ?? 'undefined'}, not { messages }`,
        ),
      );
      return;
    }
    const kept: Kept = {
      messages: reading.messages,
      oldestAgeMs: reading.oldestAgeMs,
      at: this.#startedAt,
      mark: this.#startMark,
    };
    this.#measureDrain(this.#last, kept);
    this.#last = kept;
    this.lastError = undefined;
    this.#end();
  }

  #fail(generation: number, error: unknown): void {
    if (generation !== this.#generation || !this.#inFlight) return;
    this.lastError = error;
    this.#end();
  }

  #end(): void {
    this.#inFlight = false;
    this.#controller = undefined;
    if (this.#timer !== undefined) this.#s.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    this.#lastDurationMs = this.#s.clock.now() - this.#startedAt;
    this.#s.settled();
  }

  /** Drained between two readings = before + admitted between − after, per ms, averaged. */
  #measureDrain(before: Kept | undefined, after: Kept): void {
    if (before === undefined) return;
    const dt = after.at - before.at;
    if (!(dt > 0)) return;
    const drained = before.messages + (after.mark - before.mark) - after.messages;
    const sample = drained > 0 ? drained / dt : 0;
    const rate = this.#drainPerMs;
    // An empty backlog says the consumer was idle, not slow: it cannot lower the rate.
    if (rate !== undefined && after.messages === 0 && sample < rate) return;
    this.#drainPerMs = rate === undefined ? sample : rate + drainWeight * (sample - rate);
  }
}
