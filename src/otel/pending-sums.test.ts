// Sums and histogram values kept per attribute set until the SDK collects (values also in runs
// of 256): against the real OpenTelemetry SDK with a reader collected by hand (no exporter, no
// network).
import {
  MeterProvider,
  MetricReader,
  type Histogram as HistogramPoint,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import {
  admissionChannel,
  releaseChannel,
  type AdmissionMessage,
  type ReleaseMessage,
} from '../channels/index.js';
import { nextAdmissionSeq } from '../channels/channels.js';
import { instrumentNames as n } from './instruments.js';
import { otelMetrics } from './otel-metrics.js';
import { maxAttributeSets, PendingSums } from './pending-sums.js';
import { PendingValues, valuesPerRun } from './pending-values.js';

class Reader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

async function points(reader: Reader, name: string): Promise<[unknown, unknown][]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((s) => s.metrics)
    .find((m: MetricData) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((p) => [p.attributes, p.value]);
}
const sums = points;
const histograms = points as (r: Reader, name: string) => Promise<[unknown, HistogramPoint][]>;

describe('PendingSums', () => {
  it('hands each attribute set its sum at collection, once', async () => {
    const reader = new Reader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const counter = meter.createCounter('c');
    const pending = new PendingSums(counter);
    const observable = meter.createObservableGauge('g');
    meter.addBatchObservableCallback(() => pending.flush(), [observable]);

    (pending.cell('a') ?? pending.open('a', { k: 'a' })).delta += 2;
    (pending.cell('a') ?? pending.open('a', { k: 'a' })).delta += 3;
    (pending.cell('b') ?? pending.open('b', { k: 'b' })).delta += 1;
    expect(await sums(reader, 'c')).toEqual([
      [{ k: 'a' }, 5],
      [{ k: 'b' }, 1],
    ]);
    // Cumulative, and nothing added twice.
    pending.cell('b')!.delta += 4;
    expect(await sums(reader, 'c')).toEqual([
      [{ k: 'a' }, 5],
      [{ k: 'b' }, 5],
    ]);
  });

  it('shows a sum that went up and back down before the first collection, at 0', async () => {
    const reader = new Reader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const pending = new PendingSums(meter.createUpDownCounter('u'));
    meter.addBatchObservableCallback(() => pending.flush(), [meter.createObservableGauge('g')]);
    const cell = pending.open('a', { k: 'a' });
    cell.delta++;
    cell.delta--;
    expect(await sums(reader, 'u')).toEqual([[{ k: 'a' }, 0]]);
    cell.delta += 2;
    expect(await sums(reader, 'u')).toEqual([[{ k: 'a' }, 2]]);
  });

  it(`keeps at most ${maxAttributeSets} attribute sets, and sums the rest as overflow`, async () => {
    const reader = new Reader();
    const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
    const pending = new PendingSums(meter.createCounter('c'));
    for (let i = 0; i < maxAttributeSets + 10; i++) {
      const key = `k${i}`;
      (pending.cell(key) ?? pending.open(key, { k: key })).delta++;
    }
    expect(pending.cell(`k${maxAttributeSets - 1}`)).toBeDefined();
    expect(pending.cell(`k${maxAttributeSets}`)).toBeUndefined();
    pending.flush();
    const points = await sums(reader, 'c');
    expect(points).toHaveLength(maxAttributeSets + 1);
    expect(points.at(-1)).toEqual([{ 'otel.metric.overflow': true }, 10]);
  });
});

describe('otelMetrics', () => {
  it('hands what was decided before close to the SDK', async () => {
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const metrics = otelMetrics({ meterProvider });
    const message: AdmissionMessage = {
      result: 'quota',
      route: 'r',
      criticality: undefined,
      attempt: 1,
      queued: false,
      waitMs: 0,
      status: 429,
      signal: 'later',
      retryAfterMs: 1000,
      capacityFree: true,
      req: {} as AdmissionMessage['req'],
      seq: 0,
    };
    admissionChannel.publish(message);
    metrics.close();
    expect(await sums(reader, n.requests)).toEqual([
      [{ 'spillway.route': 'r', 'spillway.result': 'quota' }, 1],
    ]);
  });

  it('counts out of active_requests only the requests it counted in', async () => {
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    type Req = AdmissionMessage['req'];
    const admit = (req: Req, seq: number | undefined): void => {
      const m = { result: 'admitted', route: 'r', criticality: 'critical', attempt: 1 };
      const rest = { queued: false, waitMs: 0, status: undefined, signal: undefined };
      const message = { ...m, ...rest, retryAfterMs: undefined, capacityFree: false, req, seq };
      admissionChannel.publish(message as AdmissionMessage);
    };
    const release = (req: Req, seq: number | undefined): void => {
      const message = { route: 'r', criticality: 'critical', heldMs: 1, outcome: 'ok', req, seq };
      releaseChannel.publish(message as ReleaseMessage);
    };
    // Admitted before the recorder existed: one published (someone else listened), one not.
    const early = { published: {} as Req, unpublished: {} as Req };
    const earlySeq = nextAdmissionSeq();
    const metrics = otelMetrics({ meterProvider });
    const late = {} as Req;
    const lateSeq = nextAdmissionSeq();
    admit(late, lateSeq);
    // An older copy of Spillway numbers nothing: its requests are told apart by identity.
    const old = { in: {} as Req, before: {} as Req };
    admit(old.in, undefined);
    release(early.published, earlySeq);
    release(early.unpublished, 0);
    release(old.before, undefined);
    expect(await sums(reader, n.activeRequests)).toEqual([[{ 'spillway.route': 'r' }, 2]]);
    release(late, lateSeq);
    release(old.in, undefined);
    expect(await sums(reader, n.activeRequests)).toEqual([[{ 'spillway.route': 'r' }, 0]]);
    metrics.close();
  });
});

function setUp(flushAtCollection: boolean): { reader: Reader; pending: PendingValues } {
  const reader = new Reader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('t');
  const histogram = meter.createHistogram('h', { advice: { explicitBucketBoundaries: [1, 10] } });
  const pending = new PendingValues(histogram);
  if (flushAtCollection) {
    meter.addBatchObservableCallback(() => pending.flush(), [meter.createObservableGauge('g')]);
  }
  return { reader, pending };
}

describe('PendingValues', () => {
  it('records every value kept when the SDK collects, once', async () => {
    const { reader, pending } = setUp(true);
    const a = pending.open('a', { k: 'a' });
    for (const v of [0.5, 5, 50]) pending.add(a, v);
    pending.add(pending.open('b', { k: 'b' }), 2);
    const [[attrs, h], [attrsB, hB]] = (await histograms(reader, 'h')) as [
      [unknown, HistogramPoint],
      [unknown, HistogramPoint],
    ];
    expect(attrs).toEqual({ k: 'a' });
    expect(h).toMatchObject({ count: 3, sum: 55.5, min: 0.5, max: 50 });
    expect(h.buckets.counts).toEqual([1, 1, 1]);
    expect([attrsB, hB.count, hB.sum]).toEqual([{ k: 'b' }, 1, 2]);
    // Cumulative, and nothing recorded twice.
    pending.add(pending.cell('a')!, 7);
    const again = (await histograms(reader, 'h'))[0]?.[1];
    expect(again).toMatchObject({ count: 4, sum: 62.5 });
  });

  it(`records a run of ${valuesPerRun} when an attribute set has that many waiting`, async () => {
    const { reader, pending } = setUp(false);
    const a = pending.open('a', { k: 'a' });
    for (let i = 0; i < valuesPerRun; i++) pending.add(a, 1);
    expect(await histograms(reader, 'h')).toEqual([]);
    pending.add(a, 100);
    const h = (await histograms(reader, 'h'))[0]?.[1];
    expect(h).toMatchObject({ count: valuesPerRun, sum: valuesPerRun, max: 1 });
    pending.flush();
    const after = (await histograms(reader, 'h'))[0]?.[1];
    expect(after).toMatchObject({ count: valuesPerRun + 1, max: 100 });
  });

  it(`keeps at most ${maxAttributeSets} attribute sets, and records the rest as overflow`, async () => {
    const { reader, pending } = setUp(true);
    for (let i = 0; i < maxAttributeSets + 10; i++) {
      const key = `k${i}`;
      pending.add(pending.cell(key) ?? pending.open(key, { k: key }), i);
    }
    expect(pending.cell(`k${maxAttributeSets - 1}`)).toBeDefined();
    expect(pending.cell(`k${maxAttributeSets}`)).toBeUndefined();
    const points = await histograms(reader, 'h');
    expect(points).toHaveLength(maxAttributeSets + 1);
    const [attrs, overflow] = points.at(-1)!;
    expect(attrs).toEqual({ 'otel.metric.overflow': true });
    expect(overflow).toMatchObject({ count: 10, min: maxAttributeSets });
  });
});

describe('otelMetrics, histograms', () => {
  it('records the lease durations kept before close', async () => {
    const reader = new Reader();
    const metrics = otelMetrics({ meterProvider: new MeterProvider({ readers: [reader] }) });
    const req = {} as ReleaseMessage['req'];
    for (const heldMs of [3, 30]) {
      const message: ReleaseMessage = {
        route: 'r',
        criticality: 'critical',
        heldMs,
        outcome: 'ok',
        req,
        seq: 0,
      };
      releaseChannel.publish(message);
    }
    metrics.close();
    const [point] = await histograms(reader, n.leaseDuration);
    expect(point?.[0]).toEqual({ 'spillway.route': 'r' });
    expect(point?.[1]).toMatchObject({ count: 2, sum: 0.033, min: 0.003, max: 0.03 });
  });
});
