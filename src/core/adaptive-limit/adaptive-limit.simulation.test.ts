// The behaviour every adaptive limit must show, checked against a resource whose capacity is
// known exactly: a slot server with K = 50 slots of 20 ms each (2,500 requests/s), offered
// 4,000 requests/s open-loop through `concurrencyLimit({ limit })`, all in virtual time.
// Windows are 100 ms (`minWindowMs = maxWindowMs = 100`); "window" below means those 100 ms.
//
// Each algorithm settles where its own rule says it should, so each has its band:
// - gradient: RTT within `rttTolerance` (1.5) of the no-load RTT plus `queueSize` headroom,
//   so K ≤ limit ≤ 1.5·K + 4 (+ a little while it settles);
// - vegas: 3–6 requests queued beyond K (thresholds 3·log10 L and 6·log10 L), as seen in the
//   median RTT of a window (the server's batches make that estimate coarse: K + 2 … K + 10);
// - aimd: loss-based, so the resource must lose work to be seen: here it refuses beyond
//   K + 10 in flight (a bounded line), and AIMD saws between 0.9·(K + 10) and K + 10.
import { describe, expect, it } from 'vitest';
import { createSlotServer } from '../../testing/slot-server.js';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { concurrencyLimit } from '../concurrency-limit/concurrency-limit.js';
import type { AdaptiveLimit } from './adaptive-limit.js';
import { aimdLimit } from './aimd-limit.js';
import { gradientLimit } from './gradient-limit.js';
import type { WindowOptions } from './sample-window.js';
import { vegasLimit } from './vegas-limit.js';

const K = 50;
const serviceMs = 20;
const offeredPerSec = 4_000;
const windowMs = 100;

interface Phase {
  readonly windows: number;
  readonly ratePerSec?: number;
  readonly serviceMs?: number;
}

/** A seeded generator, so every run is the same run. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1_103_515_245 + 12_345) & 0x7fffffff) / 0x80000000;
}

/**
 * Runs the phases and returns the limit at the end of every window, one array per phase.
 * `noise` spreads each service time uniformly over ±noise of its nominal value.
 */
function simulate(
  make: (window: WindowOptions) => AdaptiveLimit,
  phases: readonly Phase[],
  options: { readonly serverQueue: number; readonly noise?: number },
): number[][] {
  const clock = createVirtualClock();
  const random = seeded(42);
  let phase = phases[0]!;
  const limit = make({ minWindowMs: windowMs, maxWindowMs: windowMs, clock });
  const limiter = concurrencyLimit({ limit, clock });
  const noise = options.noise ?? 0;
  const server = createSlotServer({
    slots: K,
    serviceTimeMs: () => (phase.serviceMs ?? serviceMs) * (1 + noise * (2 * random() - 1)),
    maxQueue: options.serverQueue,
    clock,
  });
  const arrive = (): void => {
    const r = limiter.tryAcquire();
    if (r.ok) server.submit((ok) => r.permit.release(ok ? 'ok' : 'dropped'));
    clock.setTimer(1_000 / (phase.ratePerSec ?? offeredPerSec), arrive);
  };
  arrive();
  const traces: number[][] = [];
  for (const p of phases) {
    phase = p;
    const trace: number[] = [];
    for (let w = 0; w < p.windows; w++) {
      clock.advanceSync(windowMs);
      trace.push(limit.current);
    }
    traces.push(trace);
  }
  return traces;
}

/** Index of the first window from which every value stays within [lo, hi]; -1 if none. */
function settledFrom(trace: readonly number[], lo: number, hi: number): number {
  let from = -1;
  trace.forEach((v, i) => {
    if (v < lo || v > hi) from = -1;
    else if (from === -1) from = i;
  });
  return from;
}

interface Case {
  readonly name: string;
  readonly make: (w: WindowOptions, extra?: { initialLimit?: number }) => AdaptiveLimit;
  readonly serverQueue: number;
  /** Where the limit settles at K slots of 20 ms. */
  readonly band: readonly [number, number];
  /** Windows to settle into the band from the default start (20, below K). */
  readonly fromBelow: number;
  /** Windows to settle from 200 after it has seen the service lightly loaded. */
  readonly fromAbove: number;
  /** Windows to halve the limit after the service time rises 10×. */
  readonly halve: number;
  /** Windows to be back in the band after the service time falls back. */
  readonly recover: number;
  /** Band under ±50 % service-time noise. */
  readonly noisyBand: readonly [number, number];
}

const cases: Case[] = [
  {
    name: 'gradientLimit',
    make: (w, extra) => gradientLimit({ ...w, ...extra }),
    serverQueue: 1_000,
    band: [K, 1.5 * K + 4 + 2],
    fromBelow: 60,
    fromAbove: 20,
    // 0.9× per window, but once the RTT (200 ms) outlasts a window, a window lasts one RTT.
    halve: 20,
    recover: 60,
    // Noise lifts the p90 of the no-load windows too, so the same tolerance admits more.
    noisyBand: [K, 2 * K],
  },
  {
    name: 'vegasLimit',
    make: (w, extra) => vegasLimit({ ...w, ...extra, random: seeded(7) }),
    serverQueue: 1_000,
    band: [K + 2, K + 10],
    fromBelow: 15,
    // Vegas steps down by log10(L) per window: 2 above 100, 1 below.
    fromAbove: 100,
    halve: 60,
    recover: 15,
    noisyBand: [K - 5, K + 10],
  },
  {
    name: 'aimdLimit',
    // A sample slower than 100 ms (5× the service time) counts as a drop.
    make: (w, extra) => aimdLimit({ ...w, ...extra, timeoutMs: 100 }),
    serverQueue: 10,
    band: [Math.floor(0.9 * (K + 10)) - 1, K + 10 + 1],
    fromBelow: 50,
    fromAbove: 15,
    halve: 15,
    recover: 50,
    noisyBand: [Math.floor(0.9 * (K + 10)) - 1, K + 10 + 1],
  },
];

describe.each(cases)('$name against a server with K slots', (c) => {
  const opts = { serverQueue: c.serverQueue };
  const [lo, hi] = c.band;

  it(`converges into its band from below within ${c.fromBelow} windows and stays there`, () => {
    const [trace] = simulate(c.make, [{ windows: 200 }], opts);
    const from = settledFrom(trace!, lo, hi);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(from).toBeLessThanOrEqual(c.fromBelow);
  });

  it(`converges into its band from above (200) within ${c.fromAbove} windows`, () => {
    const light = { windows: 20, ratePerSec: 1_000 }; // the service seen unloaded first
    const [before, trace] = simulate(
      (w) => c.make(w, { initialLimit: 200 }),
      [light, { windows: 200 }],
      opts,
    );
    expect(before!.at(-1)).toBe(200); // app-limited: no reason to move
    const from = settledFrom(trace!, lo, hi);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(from).toBeLessThanOrEqual(c.fromAbove);
  });

  it(`halves within ${c.halve} windows when latency rises 10×, and recovers within ${c.recover} windows when it falls`, () => {
    const [steady, slow, fast] = simulate(
      c.make,
      [{ windows: 100 }, { windows: 100, serviceMs: 10 * serviceMs }, { windows: 200 }],
      opts,
    );
    const converged = steady!.at(-1)!;
    const halvedAt = slow!.findIndex((v) => v <= converged / 2);
    expect(halvedAt).toBeGreaterThanOrEqual(0);
    expect(halvedAt).toBeLessThan(c.halve);
    const from = settledFrom(fast!, lo, hi);
    expect(from).toBeGreaterThanOrEqual(0);
    expect(from).toBeLessThanOrEqual(c.recover);
  });

  it('stays in a bounded band under ±50 % noisy service times', () => {
    const [, trace] = simulate(c.make, [{ windows: 150 }, { windows: 300 }], {
      ...opts,
      noise: 0.5,
    });
    const [nlo, nhi] = c.noisyBand;
    expect(Math.min(...trace!)).toBeGreaterThanOrEqual(nlo);
    expect(Math.max(...trace!)).toBeLessThanOrEqual(nhi);
    // Oscillation: the spread over the last 300 windows is at most a fifth of the level.
    const mean = trace!.reduce((a, b) => a + b, 0) / trace!.length;
    expect(Math.max(...trace!) - Math.min(...trace!)).toBeLessThanOrEqual(0.2 * mean);
  });
});

describe('gradientLimit beyond Gradient2', () => {
  it.each([0, 0.9])(
    'does not creep up under sustained saturation, service-time noise ±%s (Gradient2 reaches maxLimit in ~600 windows)',
    (noise) => {
      const [trace] = simulate((w) => gradientLimit(w), [{ windows: 2_000 }], {
        serverQueue: 1_000,
        noise,
      });
      const settled = trace!.slice(300);
      expect(Math.max(...settled)).toBeLessThanOrEqual(noise === 0 ? 1.5 * K + 4 + 2 : 2 * K);
      expect(Math.max(...settled) - Math.min(...settled)).toBeLessThanOrEqual(5);
    },
  );

  it('learns a lasting slowdown: pinned at minLimit, it takes the new RTT as its baseline', () => {
    // K stays 50, so after the slowdown the right limit is the same; only the RTT moved.
    const [, slow] = simulate(
      (w) => gradientLimit(w),
      [{ windows: 100 }, { windows: 400, serviceMs: 10 * serviceMs }],
      { serverQueue: 1_000 },
    );
    expect(Math.min(...slow!)).toBe(20);
    expect(slow!.at(-1)).toBeGreaterThanOrEqual(K);
  });
});
