/**
 * `spillway/otel`: OpenTelemetry metrics (`otelMetrics`) and trace marks (`otelTraceMarks`)
 * built from Spillway's diagnostics channels (`spillway/channels`). Needs `@opentelemetry/api`
 * (≥ 1.7, < 2), an optional peer dependency: install it (your OpenTelemetry SDK brings it) to
 * import this subpath. See `docs/observability.md` for every instrument and attribute.
 *
 * @module
 */
export {
  otelMetrics,
  type ObservedDependency,
  type ObservedGuard,
  type OtelMetrics,
  type OtelMetricsOptions,
} from './otel-metrics.js';
export { otelTraceMarks, markNames, type OtelTraceMarks } from './trace-marks.js';
export {
  attributeNames,
  circuitStates,
  instrumentNames,
  leaseDurationBuckets,
  timeInQueueBuckets,
} from './instruments.js';
