import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../result.js';
import { reportData } from './report-data.js';
import type { ReportPanel } from './report-panel.js';

/** A run of one group with no windows: what reportData reads of it, the rest left out. */
const run = {
  label: 'r',
  url: 'http://127.0.0.1:1/',
  durationMs: 1_000,
  config: { connection: 'keep-alive', groups: [{ retry: 'none' }] },
  validity: { valid: true, reasons: [], scheduleLagMs: { p99: 1 }, cpuPercent: 50 },
  totals: { name: 'all', windows: [] },
  groups: [{ name: 'all', windows: [] }],
  windows: [],
} as unknown as LoadResult;

const panel: ReportPanel = {
  title: 'Server: in flight',
  unit: 'count',
  t: [0.25, 0.5],
  series: [{ label: 'in flight', values: [3, null], whole: 'max 3', dashed: true }],
  caption: 'from the server',
};

describe('reportData: panels', () => {
  it("carries a run's panels to its card as given", () => {
    const data = reportData({ runs: [{ ...run, panels: [panel] }] });
    expect(data.runs[0]!.panels).toEqual([panel]);
  });

  it('gives a run without panels none (spillway load --report draws what it drew)', () => {
    expect(reportData({ runs: [run] }).runs[0]!.panels).toEqual([]);
  });

  it('refuses a series without a value per point, naming the panel and the series', () => {
    const short = { ...panel, series: [{ ...panel.series[0]!, values: [1] }] };
    expect(() => reportData({ runs: [{ ...run, panels: [short] }] })).toThrow(
      "report panel 'Server: in flight': series 'in flight' has 1 values for 2 points",
    );
  });
});
