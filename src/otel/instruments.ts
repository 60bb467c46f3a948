/**
 * The names, kinds, units and attributes of every instrument `otelMetrics` records, in one
 * place: modelled on OpenTelemetry's stable conventions for rate-limiting middleware
 * (`aspnetcore.rate_limiting.*`: a result attribute, active leases, queued requests, time in
 * queue, lease duration), with Spillway's own attributes. Durations are in seconds, as the
 * conventions ask; OpenTelemetry's Prometheus exporter (0.2xx) turns dots into underscores and
 * counters into `…_total`, and gives the unit in a `# UNIT` line, not in the name.
 *
 * @module
 */

/** Every instrument's name. */
export const instrumentNames = {
  requests: 'spillway.admission.requests',
  activeRequests: 'spillway.admission.active_requests',
  queuedRequests: 'spillway.admission.queued_requests',
  timeInQueue: 'spillway.admission.time_in_queue',
  leaseDuration: 'spillway.admission.lease.duration',
  falsePositive: 'spillway.admission.false_positive',
  limit: 'spillway.limit',
  attempts: 'spillway.client.attempts',
  retryBudget: 'spillway.client.retry_budget',
  circuitState: 'spillway.circuit.state',
  quotaDecisions: 'spillway.quota.decisions',
} as const;

/** Every attribute's name. */
export const attributeNames = {
  route: 'spillway.route',
  result: 'spillway.result',
  criticality: 'spillway.criticality',
  dependency: 'spillway.dependency',
  outcome: 'spillway.outcome',
  retry: 'spillway.retry',
  state: 'spillway.state',
  storeDegraded: 'spillway.store.degraded',
} as const;

/**
 * Buckets for time in line, in seconds: a wait is bounded by `maxQueueWaitMs` (100 ms by
 * default, rarely above 1 s), and the interesting waits are from a fraction of a millisecond up.
 */
export const timeInQueueBuckets: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** Buckets for how long admitted work holds its slot, in seconds (as `http.server.request.duration`). */
export const leaseDurationBuckets: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

/** The states `spillway.circuit.state` has one series each for. */
export const circuitStates = ['closed', 'open', 'half-open'] as const;
