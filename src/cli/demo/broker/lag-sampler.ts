/**
 * The demo's own view of the broker's lag over a run: one reading every `sampleEveryMs`, never
 * two at once, through the same lag source the gate uses, kept for the table and the charts.
 *
 * @module
 */
import type { BrokerLine } from './broker-port.js';
import type { BrokerRecorder } from './broker-recorder.js';
import { sampleEveryMs } from './settings.js';

/** Reads until `signal` aborts; `elapsedMs` gives each reading its time in the run. */
export async function sampleLag(o: {
  readonly line: BrokerLine;
  readonly recorder: BrokerRecorder;
  readonly elapsedMs: () => number;
  readonly signal: AbortSignal;
}): Promise<void> {
  const { signal } = o;
  while (!signal.aborted) {
    const started = performance.now();
    try {
      const r = await o.line.readLag({ signal });
      if (!signal.aborted) {
        o.recorder.sampled({
          atMs: o.elapsedMs(),
          messages: r.messages,
          oldestAgeMs: r.oldestAgeMs,
        });
      }
    } catch {
      // A failed read is a gap in the chart, not a failed run.
    }
    await pause(sampleEveryMs - (performance.now() - started), signal);
  }
}

/** Waits `ms`, or until `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
