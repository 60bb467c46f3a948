import { describe, expect, it } from 'vitest';
import { assessValidity } from './validity.js';

const thresholds = { maxLagP99Ms: 5, maxCpuPercent: 90, maxDroppedFraction: 0 };
const clean = {
  scheduleLagMs: { p50: 0.4, p99: 1.2, max: 3 },
  cpuPercent: 30,
  offered: 1000,
  dropped: 0,
  thresholds,
};

describe('assessValidity', () => {
  it('a run within every threshold is valid', () => {
    expect(assessValidity(clean)).toMatchObject({ valid: true, reasons: [], droppedFraction: 0 });
  });

  it('says in words which check failed', () => {
    const v = assessValidity({
      ...clean,
      scheduleLagMs: { p50: 3, p99: 12.34, max: 40 },
      cpuPercent: 97,
      dropped: 5,
    });
    expect(v.valid).toBe(false);
    expect(v.reasons).toEqual([
      'schedule lag p99 12.3 ms > 5 ms: the generator fell behind its schedule',
      'generator CPU 97 % > 90 %: the generator may be the bottleneck',
      '5 of 1000 requests dropped (0.50 %): the connection or in-flight cap was reached, the new-connection budget was spent, or a deadline passed before sending',
    ]);
  });

  it('says when the generator was late without being busy: the machine was', () => {
    const v = assessValidity({
      ...clean,
      scheduleLagMs: { p50: 3, p99: 40, max: 90 },
      cpuPercent: 20,
    });
    expect(v.reasons).toEqual([
      'schedule lag p99 40.0 ms > 5 ms: the generator fell behind its schedule while using little CPU itself (the machine was busy)',
    ]);
  });

  it('with the machine mostly idle, says the lateness came in bursts of its own work', () => {
    const v = assessValidity({
      ...clean,
      scheduleLagMs: { p50: 0.7, p99: 11.4, max: 25 },
      cpuPercent: 36.2,
      machineIdlePercent: 58.6,
      machineLeastIdlePercent: 51.2,
    });
    expect(v.reasons).toEqual([
      'schedule lag p99 11.4 ms > 5 ms: the generator fell behind its schedule in bursts of its own work while using 36 % of a core on average, the machine at least 51 % idle in every second (garbage collection, or many connections opened or closed at once)',
    ]);
    expect(v.machineIdlePercent).toBe(59);
    expect(v.machineLeastIdlePercent).toBe(51);
  });

  it('with the machine at most a quarter idle in a second, says it was busy, and how idle', () => {
    // Half idle over the run, but a neighbour took both cores for a second: busy.
    const v = assessValidity({
      ...clean,
      scheduleLagMs: { p50: 3, p99: 40, max: 90 },
      cpuPercent: 20,
      machineIdlePercent: 52,
      machineLeastIdlePercent: 25,
    });
    expect(v.reasons).toEqual([
      'schedule lag p99 40.0 ms > 5 ms: the generator fell behind its schedule while using little CPU itself (the machine was busy: 25 % idle in its busiest second)',
    ]);
  });

  it('says why requests were dropped, most frequent reason first', () => {
    const v = assessValidity({
      ...clean,
      dropped: 5,
      droppedByReason: { 'connection cap': 2, 'connect rate': 3 },
    });
    expect(v.reasons).toEqual([
      '5 of 1000 requests dropped (0.50 %): 3 connect rate (no idle connection and the new-connection budget spent), 2 connection cap (every connection busy at the connection cap)',
    ]);
  });

  it('tolerates drops up to the threshold', () => {
    const v = assessValidity({
      ...clean,
      dropped: 5,
      thresholds: { ...thresholds, maxDroppedFraction: 0.01 },
    });
    expect(v.valid).toBe(true);
  });
});
