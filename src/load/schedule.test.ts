import { afterEach, describe, expect, it } from 'vitest';
import { resolveOptions, type LoadOptions } from './options.js';
import { Schedule, type Arrival } from './schedule.js';

const url = 'http://127.0.0.1:8080/';

/** What the schedule did, in order: arrivals as `group@intendedAt` (`~` when warm), and closes. */
interface Trace {
  readonly events: string[];
  readonly bytes: Buffer[];
  ended: number;
}

let schedule: Schedule | undefined;
afterEach(() => schedule?.stop());

/** A schedule on a clock that stands still at `at()` until the test moves it. */
function scheduleAt(options: LoadOptions, at: () => number): Trace {
  const trace: Trace = { events: [], bytes: [], ended: 0 };
  const windows = {
    endMs: 1000,
    close(): void {
      trace.events.push(`close ${windows.endMs}`);
      windows.endMs += 1000;
    },
  };
  schedule = new Schedule({
    options: resolveOptions(options),
    now: at,
    windows,
    onArrival: (a: Arrival) => {
      trace.events.push(`${a.group.name}@${a.intendedAt}${a.warm ? '~' : ''}`);
      trace.bytes.push(a.bytes);
    },
    onEnd: () => trace.ended++,
  });
  schedule.start();
  return trace;
}

describe('Schedule', () => {
  it('hands over every arrival due, each group in its order, client identities in turn', () => {
    const trace = scheduleAt(
      {
        url,
        durationMs: 500,
        groups: [
          { name: 'a', ratePerSec: 10, clients: 2, headers: { 'x-client': '{client}' } },
          { name: 'b', ratePerSec: 4, startMs: 100 },
        ],
      },
      () => 999,
    );
    expect(trace.events).toEqual(['a@0', 'a@100', 'a@200', 'a@300', 'a@400', 'b@100', 'b@350']);
    const client = (b: Buffer): string => /x-client: (\d)/.exec(b.toString('latin1'))![1]!;
    expect(trace.bytes.slice(0, 5).map(client)).toEqual(['0', '1', '0', '1', '0']);
    // Nothing is left in any group: the schedule has ended, once.
    expect(trace.ended).toBe(1);
  });

  it('sends the warm-up first, flagged and before 0; the measured schedule starts at 0', () => {
    const trace = scheduleAt(
      {
        url,
        durationMs: 300,
        warmupMs: 300,
        groups: [
          { name: 'w', ratePerSec: 10 },
          // A fixed number of requests (a canary) is not warmed up.
          { name: 'c', ratePerSec: 10, maxRequests: 2 },
        ],
      },
      () => 999,
    );
    expect(trace.events).toEqual([
      'w@-300~',
      'w@-200~',
      'w@-100~',
      'w@0',
      'w@100',
      'w@200',
      'c@0',
      'c@100',
    ]);
    expect(trace.ended).toBe(1);
  });

  it('closes a window once what was due in it is sent, before what falls in the next', () => {
    let now = 2050;
    const trace = scheduleAt({ url, durationMs: 5000, ratePerSec: 4 }, () => now);
    expect(trace.events).toEqual([
      'default@0',
      'default@250',
      'default@500',
      'default@750',
      'close 1000',
      'default@1000',
      'default@1250',
      'default@1500',
      'default@1750',
      'close 2000',
      'default@2000',
    ]);
    // A window's end while sending runs the tick at once: what is due goes, nothing twice.
    now = 2300;
    schedule!.tickNow();
    expect(trace.events.slice(11)).toEqual(['default@2250']);
    // An answer read while an arrival is due sends it (the timer has not fired yet).
    now = 2500;
    schedule!.sendWhileReading();
    schedule!.sendWhileReading();
    expect(trace.events.slice(12)).toEqual(['default@2500']);
    expect(trace.ended).toBe(0);
  });

  it("sends a stall's backlog in slices of about a millisecond, letting I/O in between", async () => {
    // The clock moves 0.05 ms a reading (one or two readings a send); 600 arrivals are due at once (a 300 ms stall at
    // 2,000/s). Sent at once, the backlog would need a connection each; sliced, answers read
    // between slices hand theirs back (the end-to-end effect is bench/generator.js's to show).
    let t = 300;
    const perTick: number[] = [];
    const trace = scheduleAt({ url, ratePerSec: 2000, durationMs: 300 }, () => {
      t += 0.05;
      return t;
    });
    let sent = trace.events.filter((e) => e.startsWith('default@')).length;
    perTick.push(sent);
    while (trace.ended === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const now = trace.events.filter((e) => e.startsWith('default@')).length;
      perTick.push(now - sent);
      sent = now;
    }
    expect(sent).toBe(600);
    expect(perTick.length).toBeGreaterThan(30);
    // At most a millisecond's worth per slice: never the whole backlog at once.
    expect(Math.max(...perTick)).toBeLessThanOrEqual(21);
  });

  it('once stopped, hands over nothing more', () => {
    let now = 0;
    const trace = scheduleAt({ url, durationMs: 5000, ratePerSec: 4 }, () => now);
    expect(trace.events).toEqual(['default@0']);
    schedule!.stop();
    expect(schedule!.done).toBe(true);
    now = 1000;
    schedule!.sendWhileReading();
    expect(trace.events).toEqual(['default@0']);
    expect(trace.ended).toBe(0);
  });
});
