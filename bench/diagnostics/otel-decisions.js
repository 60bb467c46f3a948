#!/usr/bin/env node
// A diagnostic of the observability overhead (BENCHMARKS.md, "Observability overhead"): what
// spillway/otel adds to each decision, without HTTP around it. The guard's messages for a 429
// (an admission refusal and a quota decision), a 503 (an admission refusal) and a 200 (an
// admission and a release) are published on the real channels, in rounds interleaved in one
// process: with otelMetrics recording into the OpenTelemetry SDK, and with a listener that does
// nothing (the cost of publishing alone). Prints ns per decision (median of the rounds and the
// range). --dist DIR measures another build (e.g. one built from an earlier commit), so a change
// can be compared in the same run: `node bench/diagnostics/otel-decisions.js --dist .dist-old`.
// Usage: node bench/diagnostics/otel-decisions.js [--dist DIR] [--rounds 8] [--n 200000]
import { parseArgs } from 'node:util';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';

const { values } = parseArgs({
  options: {
    dist: { type: 'string', default: new URL('../../dist', import.meta.url).pathname },
    rounds: { type: 'string', default: '8' },
    n: { type: 'string', default: '200000' },
  },
});
const dist = values.dist.startsWith('/') ? values.dist : `${process.cwd()}/${values.dist}`;
const { otelMetrics } = await import(`${dist}/otel/index.js`);
const ch = await import(`${dist}/channels/index.js`);

class Reader extends MetricReader {
  onForceFlush() {
    return Promise.resolve();
  }
  onShutdown() {
    return Promise.resolve();
  }
}

const req = {};
const refusal = (result, status) => ({
  result,
  route: 'api',
  criticality: 'critical',
  attempt: 1,
  queued: false,
  waitMs: 0,
  status,
  signal: 'later',
  retryAfterMs: 1000,
  capacityFree: false,
  req,
});
const admitted = { ...refusal('admitted', undefined), signal: undefined, retryAfterMs: undefined };
const quota = { route: 'api', result: 'quota', degraded: false };
const release = { route: 'api', heldMs: 31, outcome: 'success', req };
const decisions = {
  429: () => {
    ch.admissionChannel.publish(refusal('quota', 429));
    ch.quotaChannel.publish(quota);
  },
  503: () => ch.admissionChannel.publish(refusal('capacity', 503)),
  200: () => {
    ch.admissionChannel.publish(admitted);
    ch.releaseChannel.publish(release);
  },
};
const used = [ch.admissionChannel, ch.quotaChannel, ch.releaseChannel];
const n = Number(values.n);
const ns = {};
for (let round = 0; round < Number(values.rounds); round++) {
  for (const observed of round % 2 ? [true, false] : [false, true]) {
    for (const [kind, decide] of Object.entries(decisions)) {
      const reader = new Reader();
      const metrics = observed
        ? otelMetrics({ meterProvider: new MeterProvider({ readers: [reader] }) })
        : undefined;
      const noop = () => {};
      if (!observed) for (const c of used) c.subscribe(noop);
      for (let i = 0; i < 20_000; i++) decide();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) decide();
      (ns[`${kind} ${observed ? 'otelMetrics' : 'no-op listener'}`] ??= []).push(
        Number(process.hrtime.bigint() - t0) / n,
      );
      if (observed) await reader.collect();
      metrics?.close();
      if (!observed) for (const c of used) c.unsubscribe(noop);
    }
  }
}
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];
console.log(`${dist}: ns per decision, median of ${values.rounds} rounds (range)`);
for (const [k, v] of Object.entries(ns).sort()) {
  console.log(
    `  ${k.padEnd(22)} ${median(v).toFixed(0).padStart(6)}  (${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)})`,
  );
}
