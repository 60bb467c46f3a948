/**
 * What one way of running measured, second by second: messages offered, admitted, refused by
 * the gate, processed (and within their life or not), expired in the broker; the age of each
 * at processing; the broker's lag as sampled. Kept in the load generator's own counters
 * (`GroupRecorder`, HDR histograms), so the result is a `LoadResult` the demo's report draws.
 * Memory is bounded by the run: a bit per scheduled message, a histogram per second, a lag
 * sample per `sampleEveryMs`.
 *
 * @module
 */
import type { RecordableHistogram } from 'node:perf_hooks';
import { latencyHistogram, percentileMs, recordMs } from '../../../load/latency-histogram.js';
import { emptyCounts, GroupRecorder } from '../../../load/recorder.js';
import type { WindowCounts } from '../../../load/result.js';
import { lifeMs, offeredPerSec, sampleEveryMs } from './settings.js';
import { scheduledCount } from './schedule.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One sample of the broker's lag. */
export interface LagSample {
  /** When it was read, ms from the start. */
  readonly atMs: number;
  readonly messages: number;
  readonly oldestAgeMs: number | undefined;
}

/** One second of the run. */
export interface BrokerSecond {
  readonly counts: Mutable<WindowCounts>;
  /** Age at processing of the messages processed in it. */
  readonly ages: RecordableHistogram;
}

export class BrokerRecorder {
  readonly durationMs: number;
  /** Whole-run counters and histograms, in the load generator's terms. */
  readonly group = new GroupRecorder('messages', offeredPerSec);
  readonly seconds: BrokerSecond[];
  readonly lag: LagSample[] = [];
  readonly scheduleLag = latencyHistogram();
  /** How late the consumer noticed its jobs' ends. */
  readonly serviceLate = latencyHistogram();
  /** Refusals by the gate (each a `later` with its `retryAfterMs`). */
  refused = 0;
  /** Processed after the measured part ended (not counted in the seconds). */
  processedAfter = 0;
  readonly #confirmed: Uint8Array;
  readonly #delivered: Uint8Array;
  #highestDelivered = -1;
  readonly #maxSamples: number;

  constructor(durationMs: number) {
    this.durationMs = durationMs;
    const n = Math.ceil(durationMs / 1_000);
    this.seconds = Array.from({ length: n }, () => ({
      counts: emptyCounts(),
      ages: latencyHistogram(),
    }));
    const total = scheduledCount(offeredPerSec, durationMs);
    this.#confirmed = new Uint8Array(total);
    this.#delivered = new Uint8Array(total);
    this.#maxSamples = Math.ceil(durationMs / sampleEveryMs) + 16;
  }

  #second(atMs: number): Mutable<WindowCounts> {
    const i = Math.min(this.seconds.length - 1, Math.max(0, Math.floor(atMs / 1_000)));
    return this.seconds[i]!.counts;
  }

  /** A message fell due (`lateMs` after its time). */
  offered(dueMs: number, lateMs: number): void {
    this.group.offered();
    this.#second(dueMs).offered++;
    recordMs(this.scheduleLag, lateMs);
  }

  /** It was admitted and its publish started. */
  admitted(dueMs: number): void {
    this.group.attempt(false);
    this.#second(dueMs).attempts++;
  }

  /** The gate refused it: the producer heard `later`, to retry after `retryAfterMs`. */
  refusedByGate(dueMs: number, lateMs: number, retryAfterMs: number): void {
    this.refused++;
    this.#second(dueMs).rejected++;
    this.group.finished({
      outcome: 'rejected',
      latencyMs: lateMs,
      good: false,
      status: 0,
      retryAfterMs,
      reason: 'later',
      fromSendMs: 0,
    });
  }

  /** Not published: `dropped` (the in-flight cap) or `error` (the broker refused or failed). */
  notPublished(dueMs: number, outcome: 'dropped' | 'error', reason: string): void {
    this.#second(dueMs)[outcome]++;
    this.group.finished({
      outcome,
      latencyMs: 0,
      good: false,
      status: 0,
      retryAfterMs: undefined,
      reason,
      fromSendMs: 0,
    });
  }

  /** The broker acknowledged message `seq`. */
  confirmed(seq: number): void {
    if (seq >= 0 && seq < this.#confirmed.length) this.#confirmed[seq] = 1;
  }

  /** The consumer received message `seq`. */
  delivered(seq: number): void {
    if (seq < 0 || seq >= this.#delivered.length) return;
    this.#delivered[seq] = 1;
    if (seq > this.#highestDelivered) this.#highestDelivered = seq;
  }

  /** The consumer noticed a job's end `lateMs` after it was due. */
  served(lateMs: number): void {
    recordMs(this.serviceLate, lateMs);
  }

  /** A message was processed at `atMs`, `ageMs` after it fell due. */
  processed(atMs: number, ageMs: number): void {
    if (atMs > this.durationMs) {
      this.processedAfter++;
      return;
    }
    const good = ageMs <= lifeMs;
    const s = this.#second(atMs);
    s.ok++;
    if (good) s.good++;
    recordMs(
      this.seconds[Math.min(this.seconds.length - 1, Math.floor(atMs / 1_000))]!.ages,
      ageMs,
    );
    this.group.finished({
      outcome: 'ok',
      latencyMs: ageMs,
      good,
      status: 0,
      retryAfterMs: undefined,
      reason: '',
      fromSendMs: ageMs,
    });
  }

  /** A reading of the broker's lag (kept up to the run's number of samples). */
  sampled(sample: LagSample): void {
    if (this.lag.length < this.#maxSamples) this.lag.push(sample);
  }

  /**
   * Settles the messages the consumer never received: one skipped over (a later one was
   * received) was dropped by the broker — counted as expired when its TTL ran out, at its due
   * time + `ttlMs`; the rest were still in the broker at the end. Call once, at the end.
   */
  settle(ttlMs: number | undefined): {
    readonly published: number;
    readonly expired: number;
    readonly left: number;
  } {
    let published = 0;
    let expired = 0;
    let left = 0;
    const spacingMs = 1_000 / offeredPerSec;
    for (let seq = 0; seq < this.#confirmed.length; seq++) {
      if (this.#confirmed[seq] !== 1) continue;
      published++;
      if (this.#delivered[seq] === 1) continue;
      if (seq > this.#highestDelivered) {
        left++;
        continue;
      }
      expired++;
      const diedAtMs = seq * spacingMs + (ttlMs ?? 0);
      this.#second(diedAtMs).timeout++;
      this.group.finished({
        outcome: 'timeout',
        latencyMs: ttlMs ?? 0,
        good: false,
        status: 0,
        retryAfterMs: undefined,
        reason: 'expired',
        fromSendMs: 0,
      });
    }
    return { published, expired, left };
  }

  /** The age at processing of second `i`: p50 and p99 in ms, or null without messages. */
  agesOf(i: number): { readonly p50: number | null; readonly p99: number | null } {
    const h = this.seconds[i]!.ages;
    return { p50: percentileMs(h, 50), p99: percentileMs(h, 99) };
  }
}
