/**
 * `spillway/load`: an open-loop HTTP load generator that measures overload honestly
 * (BENCHMARKS.md): arrivals on a schedule, latency from the intended send time, outcomes kept
 * apart, HDR histograms, 1-second windows (with their 250 ms steps in a short run), validity
 * checks, and an HTML report.
 *
 * @module
 */
export { runLoad } from './run-load.js';
export type { LoadGroup, LoadOptions, ValidityThresholds } from './options.js';
export type {
  GroupStats,
  LoadProgress,
  LoadResult,
  MachineInfo,
  OutcomeCounts,
  Validity,
  WindowCounts,
  WindowStats,
  WindowStep,
} from './result.js';
export { arrivals, type Arrival } from './arrivals.js';
export { outcomes, outcomeOfStatus, type Outcome } from './outcome.js';
export type { LatencySummary } from './latency-histogram.js';
export {
  formatRetryPolicy,
  parseRetryPolicy,
  retryDelayMs,
  type AttemptEnd,
  type RetryPolicy,
} from './retry-policy.js';
export {
  alignColumns,
  formatMs,
  formatTable,
  formatValidity,
  type FormatTableOptions,
} from './format-table.js';
export { renderReport, writeReport } from './report/render-report.js';
export type { ReportData, ReportOptions, ReportRun } from './report/report-data.js';
export type { ReportPanel, ReportPanelSeries } from './report/report-panel.js';
