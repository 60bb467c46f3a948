import { describe, expect, it } from 'vitest';
import { BrokerRecorder } from './broker-recorder.js';
import { lifeMs } from './settings.js';

describe('BrokerRecorder', () => {
  it('counts a message skipped over as expired at its due time + TTL, one never reached as left', () => {
    const rec = new BrokerRecorder(4_000);
    for (const seq of [0, 1, 2, 3, 4]) rec.confirmed(seq);
    for (const seq of [0, 3]) rec.delivered(seq);
    // 1 and 2 were skipped (3 came after them): the broker dropped them. 4 is still there.
    const { published, expired, left } = rec.settle(800);
    expect({ published, expired, left }).toEqual({ published: 5, expired: 2, left: 1 });
    // Due at 1 ms and 2 ms, expired 800 ms later: in the first second.
    expect(rec.seconds[0]!.counts.timeout).toBe(2);
    expect(rec.group.totals.timeout).toBe(2);
  });

  it('counts a message useful only within its life, and none after the measured part', () => {
    const rec = new BrokerRecorder(4_000);
    rec.processed(500, lifeMs - 1);
    rec.processed(1_500, lifeMs + 1);
    rec.processed(4_001, 10);
    expect(rec.seconds[0]!.counts).toMatchObject({ ok: 1, good: 1 });
    expect(rec.seconds[1]!.counts).toMatchObject({ ok: 1, good: 0 });
    expect(rec.group.totals).toMatchObject({ ok: 2, good: 1 });
    expect(rec.processedAfter).toBe(1);
  });

  it("keeps a gate's refusal as a rejection with its wait", () => {
    const rec = new BrokerRecorder(4_000);
    rec.offered(10, 0.5);
    rec.refusedByGate(10, 0.5, 33);
    expect(rec.refused).toBe(1);
    expect(rec.seconds[0]!.counts).toMatchObject({ offered: 1, rejected: 1 });
  });
});
