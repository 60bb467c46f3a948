/**
 * `spillway serve bounded --decisions`: the guard's admission decisions in 250 ms windows —
 * admitted, refused by reason, peak in flight against the limit, time in line — fed by
 * subscribing to the diagnostics channels the guard publishes on (`src/channels`), the same
 * ones `spillway/otel` records, so the demo needs no OpenTelemetry to draw them. The
 * subscribers only add to plain counters (nothing is allocated per message); a timer closes a
 * window every 250 ms into a bounded ring.
 *
 * @module
 */
import {
  admissionChannel,
  admissionsPublished,
  queuedChannel,
  releaseChannel,
  type AdmissionMessage,
  type ReleaseMessage,
} from '../../channels/channels.js';
import { systemClock, type Clock, type TimerHandle } from '../../core/clock/clock.js';
import { positiveInteger, positiveNumber } from '../../core/internal/validate.js';

/** The path `spillway serve bounded --decisions` answers on, exempt from admission. */
export const decisionsPath = '/decisions';

/** One window of decisions, on every route of the guard together. */
export interface DecisionWindow {
  /** When the window opened, wall-clock epoch ms. */
  readonly startMs: number;
  /** How long it lasted, ms (about `windowMs`; longer when the event loop was late). */
  readonly durationMs: number;
  /** Requests let through to their handler. */
  readonly admitted: number;
  /** Refusals by reason (`capacity`, `quota`, `deadline` …); only reasons that occurred. */
  readonly refused: Readonly<Record<string, number>>;
  /** Requests whose client went away while they waited in line. */
  readonly abandoned: number;
  /** Most admitted requests holding a slot at once in the window. */
  readonly peakInFlight: number;
  /** Most requests waiting in line at once in the window. */
  readonly peakQueued: number;
  /** The limit in force when the window closed (read from the guard); null if unknown. */
  readonly limit: number | null;
  /** Requests that left the line in the window (admitted, refused or abandoned). */
  readonly waited: number;
  /** Their time in line added up, ms. */
  readonly waitSumMs: number;
  /** The longest of them, ms (0 when none). */
  readonly waitMaxMs: number;
}

/** What `/decisions` answers. */
export interface DecisionTraceSnapshot {
  /** The windows' nominal length, ms. */
  readonly windowMs: number;
  /** Most windows kept. */
  readonly maxWindows: number;
  /** Windows dropped, oldest first, to stay within `maxWindows`. */
  readonly dropped: number;
  /** The closed windows kept, oldest first (the open one is not included). */
  readonly windows: readonly DecisionWindow[];
}

/** Options of {@link decisionTrace}. */
export interface DecisionTraceOptions {
  /** The limit in force now, read once per window (e.g. `() => guard.stats()?.limit`). */
  readonly limit?: () => number | undefined;
  /** Length of a window, ms. @default 250 */
  readonly windowMs?: number;
  /**
   * Most windows kept: past it, each new window drops the oldest one (counted in `dropped`).
   * @default 2400 (10 minutes of 250 ms windows)
   */
  readonly maxWindows?: number;
  /** @default systemClock */
  readonly clock?: Clock;
}

/** A running trace: dispose (or `close`) to unsubscribe and stop its timer. */
export interface DecisionTrace extends Disposable {
  /** The windows kept so far, and how many were dropped. */
  snapshot(): DecisionTraceSnapshot;
  /** Unsubscribes and stops closing windows. Idempotent. */
  close(): void;
}

/**
 * Starts tracing every admission decision published from now on. Holds at most `maxWindows`
 * windows (about 200 bytes each): a full ring drops its oldest window for each new one.
 */
export function decisionTrace(options: DecisionTraceOptions = {}): DecisionTrace {
  return new Trace(
    positiveNumber('windowMs', options.windowMs ?? 250),
    positiveInteger('maxWindows', options.maxWindows ?? 2_400),
    { clock: options.clock ?? systemClock, limit: options.limit },
  );
}

class Trace implements DecisionTrace {
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #limit: (() => number | undefined) | undefined;
  readonly #ring: DecisionWindow[] = [];
  readonly #maxWindows: number;
  /** Where the next window goes once the ring is full. */
  #oldest = 0;
  #dropped = 0;
  #timer: TimerHandle | undefined;
  // The open window: plain counters.
  #startWall: number;
  #start: number;
  #admitted = 0;
  #refused: Record<string, number> = {};
  #abandoned = 0;
  #peakInFlight = 0;
  #peakQueued = 0;
  #waited = 0;
  #waitSumMs = 0;
  #waitMaxMs = 0;
  // Levels carried from window to window.
  #inFlight = 0;
  /** The last admission published before the trace began: later releases are above it. */
  readonly #since = admissionsPublished();
  #queued = 0;

  constructor(
    windowMs: number,
    maxWindows: number,
    o: { readonly clock: Clock; readonly limit: (() => number | undefined) | undefined },
  ) {
    this.#windowMs = windowMs;
    this.#maxWindows = maxWindows;
    this.#clock = o.clock;
    this.#limit = o.limit;
    this.#start = o.clock.now();
    this.#startWall = o.clock.wallNow();
    admissionChannel.subscribe(this.#onAdmission);
    queuedChannel.subscribe(this.#onQueued);
    releaseChannel.subscribe(this.#onRelease);
    this.#arm(this.#start + windowMs);
  }

  readonly #onAdmission = (m: AdmissionMessage): void => {
    const result = m.result;
    if (result === 'admitted') {
      this.#admitted++;
      if (++this.#inFlight > this.#peakInFlight) this.#peakInFlight = this.#inFlight;
    } else if (result === 'abandoned') this.#abandoned++;
    else this.#refused[result] = (this.#refused[result] ?? 0) + 1;
    if (!m.queued) return;
    // Left the line (a request queued before the trace began is not counted in it).
    if (this.#queued > 0) this.#queued--;
    this.#waited++;
    this.#waitSumMs += m.waitMs;
    if (m.waitMs > this.#waitMaxMs) this.#waitMaxMs = m.waitMs;
  };

  readonly #onQueued = (): void => {
    if (++this.#queued > this.#peakQueued) this.#peakQueued = this.#queued;
  };

  readonly #onRelease = (m: ReleaseMessage): void => {
    // A request admitted before the trace began was not counted in flight.
    if (m.seq > this.#since) this.#inFlight--;
  };

  /** Closes the open window at `due` (or later, if the timer was late) and opens the next. */
  #arm(due: number): void {
    this.#timer = this.#clock.setTimer(
      due - this.#clock.now(),
      () => {
        const now = this.#clock.now();
        this.#closeWindow(now);
        // Keep to the grid; after a stall longer than a window, start a fresh one from now.
        const next = due + this.#windowMs;
        this.#arm(next > now ? next : now + this.#windowMs);
      },
      { unref: true },
    );
  }

  #closeWindow(now: number): void {
    const window: DecisionWindow = {
      startMs: this.#startWall,
      durationMs: now - this.#start,
      admitted: this.#admitted,
      refused: this.#refused,
      abandoned: this.#abandoned,
      peakInFlight: this.#peakInFlight,
      peakQueued: this.#peakQueued,
      limit: this.#limit?.() ?? null,
      waited: this.#waited,
      waitSumMs: this.#waitSumMs,
      waitMaxMs: this.#waitMaxMs,
    };
    if (this.#ring.length < this.#maxWindows) this.#ring.push(window);
    else {
      this.#ring[this.#oldest] = window;
      this.#oldest = (this.#oldest + 1) % this.#maxWindows;
      this.#dropped++;
    }
    this.#startWall += now - this.#start;
    this.#start = now;
    this.#admitted = 0;
    this.#refused = {};
    this.#abandoned = 0;
    // A window's peaks start from the levels it opens with.
    this.#peakInFlight = this.#inFlight;
    this.#peakQueued = this.#queued;
    this.#waited = 0;
    this.#waitSumMs = 0;
    this.#waitMaxMs = 0;
  }

  snapshot(): DecisionTraceSnapshot {
    const ring = this.#ring;
    return {
      windowMs: this.#windowMs,
      maxWindows: this.#maxWindows,
      dropped: this.#dropped,
      windows: [...ring.slice(this.#oldest), ...ring.slice(0, this.#oldest)],
    };
  }

  close(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    admissionChannel.unsubscribe(this.#onAdmission);
    queuedChannel.unsubscribe(this.#onQueued);
    releaseChannel.unsubscribe(this.#onRelease);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
