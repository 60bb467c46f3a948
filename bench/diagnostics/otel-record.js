#!/usr/bin/env node
// What one Histogram `record` costs in the OpenTelemetry SDK (docs/observability.md, "Counters
// and UpDownCounters…"; BENCHMARKS.md, "Observability overhead"): the histogram spillway/otel
// records per admitted request, with one attribute, into a MeterProvider whose reader is never
// read — as recorded, and with a View that drops it (aggregation DROP). ns per call, each round
// of N calls in turn; the median and range of the rounds.
// Usage: node bench/diagnostics/otel-record.js [--rounds 7] [--n 1000000]
import { parseArgs } from 'node:util';
import { AggregationType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { median } from '../lib/stats.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    n: { type: 'string', default: '1000000' },
  },
});
const rounds = Number(values.rounds);
const n = Number(values.n);

class Reader extends MetricReader {
  onForceFlush() {
    return Promise.resolve();
  }
  onShutdown() {
    return Promise.resolve();
  }
}

function histogram(views) {
  const provider = new MeterProvider({ readers: [new Reader()], views });
  return provider.getMeter('spillway').createHistogram('spillway.admission.lease.duration', {
    unit: 's',
  });
}
const cases = {
  recorded: histogram([]),
  'dropped by a View': histogram([
    {
      instrumentName: 'spillway.admission.lease.duration',
      aggregation: { type: AggregationType.DROP },
    },
  ]),
};
const attributes = { 'spillway.route': 'api' };
const ns = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [name, h] of Object.entries(cases)) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) h.record(0.031, attributes);
    ns[name].push(Number(process.hrtime.bigint() - t0) / n);
  }
}
console.log(
  `Histogram.record, ${n.toLocaleString('en')} calls a round, ${rounds} rounds, Node ${process.version}`,
);
for (const [name, xs] of Object.entries(ns)) {
  const lo = Math.min(...xs).toFixed(0);
  const hi = Math.max(...xs).toFixed(0);
  console.log(`  ${name.padEnd(18)} ${median(xs).toFixed(0).padStart(6)} ns  (${lo}–${hi})`);
}
