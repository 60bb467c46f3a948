import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  admissionChannel,
  nextAdmissionSeq,
  queuedChannel,
  releaseChannel,
  type AdmissionMessage,
} from '../../channels/channels.js';
import type { Clock } from '../../core/clock/clock.js';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { decisionTrace, type DecisionTrace } from './decision-trace.js';

const req = {} as IncomingMessage;
const route = 'default';

/** The numbers of the admissions published and not yet released, oldest first. */
const held: number[] = [];

function decide(result: AdmissionMessage['result'], waitMs?: number): void {
  const seq = result === 'admitted' ? nextAdmissionSeq() : 0;
  if (seq > 0) held.push(seq);
  admissionChannel.publish({
    result,
    route,
    criticality: 'critical',
    attempt: 1,
    queued: waitMs !== undefined,
    waitMs: waitMs ?? 0,
    status: result === 'admitted' ? undefined : 503,
    signal: undefined,
    retryAfterMs: undefined,
    capacityFree: false,
    req,
    seq,
  });
}
const queue = (): void => queuedChannel.publish({ route, criticality: 'critical', req });
/** Releases the oldest admission still held, or the one numbered `seq`. */
const release = (seq = held.shift()!): void =>
  releaseChannel.publish({ route, criticality: 'critical', heldMs: 30, outcome: 'ok', req, seq });

let trace: DecisionTrace | undefined;
afterEach(() => {
  trace?.close();
  held.length = 0;
});

describe('decisionTrace', () => {
  it('counts each window: admitted, refused by reason, peaks, the limit, time in line', async () => {
    const clock = createVirtualClock({ wallStart: 1_000_000 });
    let limit = 10;
    trace = decisionTrace({ clock, limit: () => limit });
    decide('admitted');
    decide('admitted');
    decide('quota');
    decide('quota');
    decide('capacity');
    queue();
    queue();
    decide('admitted', 12); // out of the line into a slot
    decide('capacity', 50); // timed out in line
    release();
    await clock.advance(250);
    // Second window: one request still in flight from before, one more admitted and released.
    decide('admitted');
    release();
    release();
    queue();
    decide('abandoned', 4);
    limit = 7;
    await clock.advance(250);
    const { windows, dropped } = trace.snapshot();
    expect(dropped).toBe(0);
    expect(windows).toEqual([
      {
        startMs: 1_000_000,
        durationMs: 250,
        admitted: 3,
        refused: { quota: 2, capacity: 2 },
        abandoned: 0,
        peakInFlight: 3,
        peakQueued: 2,
        limit: 10,
        waited: 2,
        waitSumMs: 62,
        waitMaxMs: 50,
      },
      {
        startMs: 1_000_250,
        durationMs: 250,
        admitted: 1,
        refused: {},
        abandoned: 1,
        // 2 in flight when it opened, 3 at most.
        peakInFlight: 3,
        peakQueued: 1,
        limit: 7,
        waited: 1,
        waitSumMs: 4,
        waitMaxMs: 4,
      },
    ]);
  });

  it('keeps at most maxWindows, dropping the oldest and counting them', async () => {
    const clock = createVirtualClock({ wallStart: 0 });
    trace = decisionTrace({ clock, maxWindows: 3, windowMs: 100 });
    for (let i = 1; i <= 5; i++) {
      for (let n = 0; n < i; n++) decide('admitted');
      for (let n = 0; n < i; n++) release();
      await clock.advance(100);
    }
    const { windows, dropped, maxWindows } = trace.snapshot();
    expect(maxWindows).toBe(3);
    expect(dropped).toBe(2);
    expect(windows.map((w) => [w.startMs, w.admitted])).toEqual([
      [200, 3],
      [300, 4],
      [400, 5],
    ]);
  });

  it('keeps to its grid when a timer is late, and a long stall makes one long window', async () => {
    const base = createVirtualClock({ wallStart: 0 });
    // The next timer set fires `late` ms after its time (a busy event loop), once.
    let late = 30;
    const clock: Clock = {
      ...base,
      now: () => base.now(),
      wallNow: () => base.wallNow(),
      setTimer: (ms, fn) => {
        const handle = base.setTimer(ms + late, fn);
        late = 0;
        return handle;
      },
      clearTimer: (handle) => base.clearTimer(handle),
    };
    trace = decisionTrace({ clock, windowMs: 100 });
    await base.advance(250);
    late = 450; // the timer set at 300 ms
    await base.advance(700);
    const spans = trace.snapshot().windows.map((w) => [w.startMs, w.durationMs]);
    expect(spans).toEqual([
      [0, 130],
      [130, 70], // back on the grid
      [200, 100],
      [300, 550], // the stall: one long window, then a fresh grid from its end
      [850, 100],
    ]);
  });

  it('does not count out a request admitted before it began', async () => {
    const clock = createVirtualClock();
    const before = nextAdmissionSeq(); // admitted while nobody listened
    trace = decisionTrace({ clock, windowMs: 100 });
    decide('admitted');
    release(before);
    await clock.advance(100);
    release();
    await clock.advance(100);
    // Still 1 in flight after the early release (the next window starts from it), then 0.
    expect(trace.snapshot().windows.map((w) => w.peakInFlight)).toEqual([1, 1]);
    decide('admitted');
    await clock.advance(100);
    expect(trace.snapshot().windows.map((w) => w.peakInFlight)).toEqual([1, 1, 1]);
  });

  it('stops counting and closing windows once closed', () => {
    const clock = createVirtualClock();
    trace = decisionTrace({ clock });
    expect(admissionChannel.hasSubscribers).toBe(true);
    trace.close();
    trace.close();
    expect(admissionChannel.hasSubscribers).toBe(false);
    expect(queuedChannel.hasSubscribers).toBe(false);
    expect(releaseChannel.hasSubscribers).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses options out of range, naming them', () => {
    expect(() => decisionTrace({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => decisionTrace({ maxWindows: 1.5 })).toThrow(/maxWindows/);
  });
});
