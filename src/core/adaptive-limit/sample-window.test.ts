import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { SampleWindow, reservoirSize, windowSettings } from './sample-window.js';

const ok = (rttMs: number, inflight = 1) => ({ rttMs, inflight, dropped: false });

describe('SampleWindow', () => {
  it('closes once it has lasted minWindowMs and holds minWindowSamples, then summarises', () => {
    const clock = createVirtualClock();
    const w = new SampleWindow(windowSettings({ clock }), 0.9, 5_000);
    for (let i = 1; i <= 20; i++) expect(w.add(ok(i, i))).toBe(false); // 20 samples, no time
    clock.advanceSync(999);
    expect(w.add(ok(21))).toBe(false);
    clock.advanceSync(1);
    expect(w.add(ok(22))).toBe(true);
    expect(w.rttMs).toBe(20); // nearest rank: the 20th of 22 sorted RTTs
    expect(w.minRttMs).toBe(1);
    expect(w.inflight).toBe(20);
    expect(w.dropped).toBe(false);
  });

  it('waits for minWindowSamples however long the window has lasted', () => {
    const clock = createVirtualClock();
    const w = new SampleWindow(windowSettings({ clock, minWindowSamples: 3 }), 0.5, 5_000);
    w.add(ok(5));
    clock.advanceSync(10_000);
    expect(w.add(ok(5))).toBe(false);
    expect(w.add(ok(5))).toBe(true);
  });

  it('lasts twice the smallest RTT of the window before, kept within [minWindowMs, maxWindowMs]', () => {
    const clock = createVirtualClock();
    const s = windowSettings({ clock, minWindowMs: 50, maxWindowMs: 400, minWindowSamples: 1 });
    const w = new SampleWindow(s, 0.5, 5_000);
    clock.advanceSync(1);
    expect(w.add(ok(120))).toBe(false); // the first window lasts minWindowMs
    clock.advanceSync(50);
    expect(w.add(ok(120))).toBe(true); // next: 2 × 120 = 240 ms
    expect(w.add(ok(300))).toBe(false);
    clock.advanceSync(239);
    expect(w.add(ok(300))).toBe(false);
    clock.advanceSync(1);
    expect(w.add(ok(300))).toBe(true); // next: 2 × 300 = 600 → 400 ms
    expect(w.add(ok(1))).toBe(false);
    clock.advanceSync(399);
    expect(w.add(ok(1))).toBe(false);
    clock.advanceSync(1);
    expect(w.add(ok(1))).toBe(true);
  });

  it('ignores RTTs below the floor (and nonsense), but never a drop', () => {
    const clock = createVirtualClock();
    const w = new SampleWindow(windowSettings({ clock, minWindowSamples: 2 }), 0.5, 5_000);
    for (const rtt of [0.05, 0, -1, Number.NaN, Infinity]) expect(w.add(ok(rtt))).toBe(false);
    clock.advanceSync(5_000); // ignored samples did not start the window
    expect(w.add({ rttMs: 0.01, inflight: 3, dropped: true })).toBe(false);
    expect(w.add(ok(2))).toBe(false);
    clock.advanceSync(1_000);
    expect(w.add(ok(2))).toBe(true);
    expect(w.dropped).toBe(true);
    expect(w.rttMs).toBe(2); // the drop had no usable RTT
    expect(w.inflight).toBe(3);
  });

  it('counts a sample slower than timeoutMs as a drop', () => {
    const clock = createVirtualClock();
    const s = windowSettings({ clock, minWindowMs: 0, maxWindowMs: 0, minWindowSamples: 1 });
    const w = new SampleWindow(s, 0.5, 100);
    expect(w.add(ok(100))).toBe(true);
    expect(w.dropped).toBe(false);
    expect(w.add(ok(101))).toBe(true);
    expect(w.dropped).toBe(true);
  });

  it('keeps a bounded reservoir whose percentile stays close with a million samples', () => {
    const clock = createVirtualClock();
    const w = new SampleWindow(windowSettings({ clock, minWindowSamples: 1 }), 0.9, Infinity);
    const n = 1_000_000;
    // A scrambled but complete pass over 1..n (a multiplicative permutation mod a prime).
    const p = 1_000_003;
    for (let i = 1; i <= n; i++) w.add(ok((((i * 7_919) % p) % n) + 1));
    clock.advanceSync(1_000);
    // Past 512 samples the clock is read every 8th sample: the window closes within 8.
    let closedAfter = 0;
    while (!w.add(ok(1)) && closedAfter < 8) closedAfter++;
    expect(closedAfter).toBeLessThan(8);
    expect(reservoirSize).toBeLessThanOrEqual(1_024);
    expect(w.rttMs / n).toBeGreaterThan(0.85);
    expect(w.rttMs / n).toBeLessThan(0.95);
  });

  it('samples the whole window evenly: the percentile of a rising sequence is not skewed', () => {
    const clock = createVirtualClock();
    const w = new SampleWindow(windowSettings({ clock, minWindowSamples: 1 }), 0.5, Infinity);
    const n = 200_000;
    for (let i = 1; i <= n; i++) w.add(ok(i)); // early samples small, late ones large
    clock.advanceSync(1_000);
    for (let i = 0; i < 8 && !w.add(ok(n)); i++);
    expect(w.rttMs / n).toBeGreaterThan(0.45);
    expect(w.rttMs / n).toBeLessThan(0.55);
  });

  it('validates its options, naming them', () => {
    expect(() => windowSettings({ minWindowMs: -1 })).toThrow(/`minWindowMs`/);
    expect(() => windowSettings({ minWindowMs: 500, maxWindowMs: 100 })).toThrow(
      /`maxWindowMs` to be at least minWindowMs \(500\)/,
    );
    expect(() => windowSettings({ minWindowSamples: 0 })).toThrow(/`minWindowSamples`/);
    expect(() => windowSettings({ rttFloorMs: Number.NaN })).toThrow(/`rttFloorMs`/);
    expect(() => windowSettings({ clock: {} as never })).toThrow(/`clock`/);
  });
});
