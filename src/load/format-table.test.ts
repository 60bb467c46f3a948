import { describe, expect, it } from 'vitest';
import { formatMs, formatTable } from './format-table.js';
import { buildStats, GroupRecorder } from './recorder.js';
import type { LoadResult } from './result.js';
import { assessValidity } from './validity.js';

function recorder(name: string, outcomes: [string, number, number][]): GroupRecorder {
  const r = new GroupRecorder(name, 10);
  for (const [outcome, latencyMs, status] of outcomes) {
    r.offered();
    r.finished({
      outcome: outcome as 'ok',
      latencyMs,
      good: outcome === 'ok',
      status,
      retryAfterMs: outcome === 'rejected' ? 1000 : undefined,
      reason: '',
      fromSendMs: latencyMs,
    });
  }
  return r;
}

function result(recorders: GroupRecorder[], lagP99 = 1): LoadResult {
  const groups = recorders.map((r) => r.stats(1000));
  const totals = buildStats({
    name: 'total',
    ratePerSec: 20,
    durationMs: 1000,
    recorders,
    windows: [],
  });
  return {
    label: 'demo · 1x',
    durationMs: 1000,
    peakConnections: 3,
    config: { connection: 'keep-alive' },
    groups,
    totals,
    validity: assessValidity({
      scheduleLagMs: { p50: 0.5, p99: lagP99, max: 2 },
      cpuPercent: 12,
      offered: totals.offered,
      dropped: totals.dropped,
      thresholds: { maxLagP99Ms: 5, maxCpuPercent: 90, maxDroppedFraction: 0 },
    }),
  } as unknown as LoadResult;
}

describe('formatTable', () => {
  it('one row per group, a total, rejections by status, and the verdict', () => {
    const a = recorder('greedy', [
      ['ok', 10, 200],
      ['rejected', 1, 429],
      ['rejected', 2, 429],
    ]);
    const b = recorder('polite', [
      ['ok', 20, 200],
      ['timeout', 1000, 0],
      ['error', 5, 500],
    ]);
    const text = formatTable(result([a, b]), { capacityPerSec: 2 });
    const lines = text.split('\n');
    expect(lines[0]).toBe('demo · 1x: 1.0 s, keep-alive connections (peak 3)');
    expect(lines[1]).toMatch(/^group\s+offered\/s\s+sent\s+ok\s+goodput\/s\s+G\s+ok p50/);
    expect(lines[2]).toMatch(
      /^greedy\s+3\s+3\s+1\s+1\s+0\.50\s+10\.0 ms\s+10\.0 ms\s+2 \(429: 2\)\s+2\.00 ms\s+0\s+0\s+0\s+0$/,
    );
    expect(lines[3]).toMatch(/^polite .* 1 \(500: 1\)\s+1\s+0\s+0$/);
    expect(lines[4]).toMatch(/^total\s+6\s+6\s+2\s+2\s+1\.00/);
    expect(lines[5]).toBe(
      'generator kept its schedule: schedule lag p50 0.50 ms, p99 1.00 ms, max 2.00 ms; generator CPU 12 %; dropped 0',
    );
  });

  it('says loudly when the run is not valid', () => {
    const text = formatTable(result([recorder('a', [['ok', 1, 200]])], 9));
    expect(text).toContain('NOT VALID — do not quote these numbers');
    expect(text).toContain('  - schedule lag p99 9.0 ms > 5 ms');
  });
});

describe('formatMs', () => {
  it('keeps three significant digits or so, and a dash for nothing', () => {
    expect([formatMs(0.123), formatMs(12.34), formatMs(1234.5), formatMs(undefined)]).toEqual([
      '0.12 ms',
      '12.3 ms',
      '1,235 ms',
      '–',
    ]);
  });
});
