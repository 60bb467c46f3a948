/**
 * The producer's clock: messages due at an even rate, sent open loop — each goes out when it is
 * due, whatever became of the ones before — with how late each went (the schedule lag, which
 * says whether the machine let the producer keep its rate).
 *
 * @module
 */

/** Options of {@link runSchedule}. */
export interface ScheduleOptions {
  readonly ratePerSec: number;
  readonly durationMs: number;
  /** The schedule's start, on `performance.now()`'s clock. */
  readonly originMs: number;
  /** Stops the schedule early. */
  readonly signal: AbortSignal;
  /** Called once per message, in order: its number, when it was due (ms from the start) and how late it is. */
  readonly offer: (seq: number, dueMs: number, lateMs: number) => void;
}

/** Messages a schedule sends in all. */
export function scheduledCount(ratePerSec: number, durationMs: number): number {
  return Math.floor((ratePerSec * durationMs) / 1_000);
}

/** Runs the schedule; resolves when the last message is due, or when `signal` aborts. */
export async function runSchedule(o: ScheduleOptions): Promise<void> {
  const total = scheduledCount(o.ratePerSec, o.durationMs);
  const spacingMs = 1_000 / o.ratePerSec;
  let seq = 0;
  while (seq < total && !o.signal.aborted) {
    const now = performance.now() - o.originMs;
    // Everything due by now goes out now, each with how late it is.
    while (seq < total && seq * spacingMs <= now) {
      o.offer(seq, seq * spacingMs, now - seq * spacingMs);
      seq++;
    }
    if (seq >= total) break;
    const waitMs = seq * spacingMs - (performance.now() - o.originMs);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs)));
  }
}
