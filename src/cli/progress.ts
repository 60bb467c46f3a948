/**
 * The live progress of `spillway load` on stderr: one line rewritten in place on a terminal,
 * plain periodic lines otherwise (logs and CI keep a readable record).
 *
 * @module
 */
import type { LoadProgress } from '../load/index.js';

// Made once, at import: the first number formatted with a locale loads ICU's data, 25–30 ms of
// CPU on Node 20–24, and a run's first progress line would otherwise pay it in the middle of the
// run, as a stall the generator measures as its own schedule lag.
const numberFormat = new Intl.NumberFormat('en-US');
const n = (value: number): string => numberFormat.format(value);

/** One progress line: elapsed (to a tenth of a second), offered, ok, rejected, timeouts (and the rest when non-zero). */
export function progressLine(p: LoadProgress): string {
  const extra = [
    p.error > 0 ? `errors ${n(p.error)}` : '',
    p.network > 0 ? `network ${n(p.network)}` : '',
    p.dropped > 0 ? `dropped ${n(p.dropped)}` : '',
  ].filter((s) => s !== '');
  return [
    // A tenth of a second: a window that closes a little late would otherwise read as the
    // same second twice (`4 s … 4 s`), and the line after the run as a repeat of the last.
    `${(p.elapsedMs / 1000).toFixed(1).padStart(5)} s`,
    `offered ${n(p.offered)}`,
    `ok ${n(p.ok)}`,
    `rejected ${n(p.rejected)}`,
    `timeouts ${n(p.timeout)}`,
    ...extra,
    `in flight ${n(p.inFlight)}`,
  ].join('  ');
}

/** Writes progress to a stream; `finish()` clears the live line. */
export function progressReporter(stream: NodeJS.WriteStream, everyWindows = 5) {
  const live = stream.isTTY;
  let windows = 0;
  return {
    update(p: LoadProgress): void {
      windows++;
      if (live) stream.write(`\r\x1b[2K${progressLine(p)}`);
      else if (windows % everyWindows === 0) stream.write(`${progressLine(p)}\n`);
    },
    finish(): void {
      if (live && windows > 0) stream.write('\r\x1b[2K');
    },
  };
}
