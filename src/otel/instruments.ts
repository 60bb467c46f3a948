/**
 * The names, kinds, units and attributes of every instrument `otelMetrics` records, in one
 * place, and the instruments made from them: modelled on OpenTelemetry's stable conventions for rate-limiting middleware
 * (`aspnetcore.rate_limiting.*`: a result attribute, active leases, queued requests, time in
 * queue, lease duration), with Spillway's own attributes. Durations are in seconds, as the
 * conventions ask; OpenTelemetry's Prometheus exporter (0.2xx) turns dots into underscores and
 * counters into `…_total`, and gives the unit in a `# UNIT` line, not in the name.
 *
 * @module
 */
import type { Counter, Histogram, Meter, ObservableGauge, UpDownCounter } from '@opentelemetry/api';

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

/** How an instrument is made: its kind, unit and description (buckets for a histogram). */
interface InstrumentSpec {
  readonly kind: 'counter' | 'upDownCounter' | 'histogram' | 'gauge';
  readonly unit: string;
  readonly description: string;
  readonly buckets?: readonly number[];
}

/** Every instrument's kind, unit and description, by the key of its name, in the order they are made. */
const instrumentSpecs = {
  requests: {
    kind: 'counter',
    unit: '{request}',
    description:
      'Admission decisions, by route, result (admitted or the refusal reason) and criticality.',
  },
  activeRequests: {
    kind: 'upDownCounter',
    unit: '{request}',
    description: 'Admitted requests holding a slot.',
  },
  queuedRequests: {
    kind: 'upDownCounter',
    unit: '{request}',
    description: 'Requests waiting in line for a slot.',
  },
  timeInQueue: {
    kind: 'histogram',
    unit: 's',
    description: 'Time requests spent in line, by how they left it.',
    buckets: timeInQueueBuckets,
  },
  leaseDuration: {
    kind: 'histogram',
    unit: 's',
    description: 'How long admitted requests held their slot.',
    buckets: leaseDurationBuckets,
  },
  falsePositive: {
    kind: 'counter',
    unit: '{request}',
    description:
      'Shed or overload refusals made while the route had a free slot and an empty line.',
  },
  attempts: {
    kind: 'counter',
    unit: '{attempt}',
    description: 'Attempts of dependency calls, by outcome; retries apart.',
  },
  quotaDecisions: {
    kind: 'counter',
    unit: '{decision}',
    description: 'Per-client quota decisions, and whether a degraded store made them.',
  },
  limit: {
    kind: 'gauge',
    unit: '{request}',
    description: 'The concurrency limit in force, per route or dependency (adaptive limits move).',
  },
  retryBudget: {
    kind: 'gauge',
    unit: '{retry}',
    description: 'Retries the dependency’s budget would allow now.',
  },
  circuitState: {
    kind: 'gauge',
    unit: '1',
    description: 'A dependency’s circuit breaker: 1 for the state it is in, 0 for the others.',
  },
} as const satisfies Record<keyof typeof instrumentNames, InstrumentSpec>;

interface InstrumentOfKind {
  counter: Counter;
  upDownCounter: UpDownCounter;
  histogram: Histogram;
  gauge: ObservableGauge;
}

/** Every instrument, made on one meter. */
export type Instruments = {
  readonly [
    K in keyof typeof instrumentSpecs
  ]: InstrumentOfKind[(typeof instrumentSpecs)[K]['kind']];
};

/** Makes every instrument on `meter`, as {@link instrumentNames} and the specs above say. */
export function createInstruments(meter: Meter): Instruments {
  const made: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(instrumentSpecs) as [
    keyof typeof instrumentSpecs,
    InstrumentSpec,
  ][]) {
    const name = instrumentNames[key];
    const options = { unit: spec.unit, description: spec.description };
    if (spec.kind === 'counter') made[key] = meter.createCounter(name, options);
    else if (spec.kind === 'upDownCounter') made[key] = meter.createUpDownCounter(name, options);
    else if (spec.kind === 'gauge') made[key] = meter.createObservableGauge(name, options);
    else {
      const advice = { explicitBucketBoundaries: [...(spec.buckets ?? [])] };
      made[key] = meter.createHistogram(name, { ...options, advice });
    }
  }
  return made as Instruments;
}
