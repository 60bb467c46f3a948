// spillway/otel with the real OpenTelemetry SDK: a real node:http guard and a real dependency,
// on real sockets on 127.0.0.1, driven through admissions at the door and after a wait in line,
// quota, capacity and deadline refusals (at the door and in line), a shed that was a false
// positive, retries and a breaker opening. Every instrument's name, kind, unit, attributes and
// values are read back from an SDK reader; the trace marks from spans an in-memory exporter
// kept. The guard runs on a virtual clock (waits and leases are exact); the dependency on real
// time, with 1–2 ms backoffs.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { context, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  DataPointType,
  InstrumentType,
  MeterProvider,
  MetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestChannel } from '../../src/channels/index.js';
import { CircuitOpenError, dependency, type Dependency } from '../../src/client/index.js';
import { admission, type Admission, type EventLoopMonitor } from '../../src/node/index.js';
import {
  instrumentNames as n,
  otelMetrics,
  otelTraceMarks,
  type OtelMetrics,
  type OtelTraceMarks,
} from '../../src/otel/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until } from '../helpers/http.js';

class Reader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const reader = new Reader();
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(spans)],
});
const tracer = tracerProvider.getTracer('test');

async function collect(): Promise<Map<string, MetricData>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const all = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
  return new Map(all.map((m) => [m.descriptor.name, m]));
}

/** The data points of `name` as [attributes, value] pairs (a histogram's value: count and sum). */
function points(
  metrics: Map<string, MetricData>,
  name: string,
): [Attributes, number | { count: number; sum: number }][] {
  const m = metrics.get(name);
  if (m === undefined) return [];
  return m.dataPoints.map((p) => {
    const v = p.value as number | { count: number; sum?: number };
    return [p.attributes, typeof v === 'number' ? v : { count: v.count, sum: v.sum ?? 0 }];
  });
}

const clock = createVirtualClock();
const holds: (() => void)[] = [];
// The event loop's verdict, stubbed: it sheds sheddable work whatever the slots say.
const loop = {
  shouldShed: (criticality: string | undefined) => criticality === 'sheddable',
  onComplete: () => undefined,
  close: () => undefined,
} as unknown as EventLoopMonitor;
let guard: Admission;
let server: Server;
let port = 0;
let callee: Server;
let users: Dependency;
let flakyHits = 0;
let metrics: OtelMetrics;
let marks: OtelTraceMarks;
const traced: string[] = [];
const onTrace = {
  start: () => void traced.push('start'),
  end: () => void traced.push('end'),
  asyncStart: () => void traced.push('asyncStart'),
  asyncEnd: () => void traced.push('asyncEnd'),
  error: () => void traced.push('error'),
};

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
  guard = admission({
    clock,
    limit: 1,
    maxQueue: 1,
    maxQueueWaitMs: 100,
    penaltyBox: false,
    quota: { ratePerSec: 1, burst: 1 },
    key: (req) => String(req.headers['x-client']),
    eventLoop: loop,
  });
  const guarded = guard.handle(async (req, res) => {
    if (req.url === '/hold') await new Promise<void>((r) => holds.push(r));
    res.end('ok');
  });
  // What a user's HTTP instrumentation does: a span active around the request's handling.
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    tracer.startActiveSpan(`request ${String(req.headers['x-client'])}`, (span) => {
      res.on('close', () => span.end());
      guarded(req, res);
    });
  });
  port = await listen(server);
  callee = createServer((req, res) => {
    if (req.url === '/flaky' && flakyHits++ === 0) {
      res.writeHead(503, { 'spillway-retry': 'later', 'retry-after': '0' }).end();
    } else if (req.url === '/broken') res.writeHead(500).end();
    else res.end('ok');
  });
  const calleePort = await listen(callee);
  users = dependency({
    name: 'users',
    baseUrl: `http://127.0.0.1:${calleePort}`,
    retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 2 } },
    breaker: { trip: { kind: 'consecutive', failures: 2 }, openMs: 60_000 },
    throttle: false,
  });
  metrics = otelMetrics({ meterProvider, routes: [guard], dependencies: [users] });
  marks = otelTraceMarks();
  requestChannel.subscribe(onTrace);
});

afterAll(async () => {
  requestChannel.unsubscribe(onTrace);
  metrics.close();
  marks[Symbol.dispose]();
  guard.close();
  await Promise.all([close(server), close(callee)]);
  await meterProvider.shutdown();
  trace.disable();
  context.disable();
});

const as = (client: string, headers: Record<string, string> = {}) => ({
  headers: { 'x-client': client, ...headers },
});

describe('otelMetrics and otelTraceMarks over a real guard and dependency', () => {
  it('records every admission decision, the line, the leases and the quota', async () => {
    // A takes the only slot; B waits in line; C finds the line full.
    const a = send(port, { path: '/hold', ...as('a') });
    await until(() => guard.inflight === 1);
    expect(traced).toEqual(['start', 'end']);
    const b = send(port, { path: '/hold', ...as('b') });
    await until(() => guard.stats()!.queued === 1);
    const during = await collect();
    expect(points(during, n.activeRequests)).toEqual([[{ 'spillway.route': 'default' }, 1]]);
    expect(points(during, n.queuedRequests)).toEqual([[{ 'spillway.route': 'default' }, 1]]);
    expect((await send(port, as('c'))).status).toBe(503);
    // 30 ms later A finishes: B gets its slot after 30 ms in line.
    await clock.advance(30);
    holds.shift()!();
    expect((await a).status).toBe(200);
    expect(traced).toEqual(['start', 'end', 'asyncStart', 'asyncEnd', 'start', 'end']);
    await until(() => holds.length === 1);
    // D asks for 50 ms and waits them out in line; E waits out the line's 100 ms.
    const d = send(port, { path: '/hold', ...as('d', { 'spillway-deadline': '50' }) });
    await until(() => guard.stats()!.queued === 1);
    await clock.advance(50);
    expect((await d).status).toBe(503);
    const e = send(port, { path: '/hold', ...as('e') });
    await until(() => guard.stats()!.queued === 1);
    await clock.advance(100);
    expect((await e).status).toBe(503);
    // A spent deadline is refused at the door, before its criticality is read.
    expect((await send(port, as('f', { 'spillway-deadline': '0' }))).status).toBe(503);
    // B finishes after 150 ms holding the slot; Q gets through once, then its quota is spent.
    holds.shift()!();
    expect((await b).status).toBe(200);
    await until(() => guard.inflight === 0);
    expect((await send(port, as('q'))).status).toBe(200);
    expect((await send(port, as('q'))).status).toBe(429);
    // S is sheddable and the loop sheds it, though the slot is free: a false positive.
    const s = await send(port, as('s', { 'spillway-criticality': 'sheddable' }));
    expect(s.status).toBe(503);

    const m = await collect();
    const route = { 'spillway.route': 'default' };
    const critical = { ...route, 'spillway.criticality': 'critical' };
    expect(points(m, n.requests)).toEqual(
      expect.arrayContaining([
        [{ ...critical, 'spillway.result': 'admitted' }, 3],
        [{ ...critical, 'spillway.result': 'capacity' }, 2],
        [{ ...critical, 'spillway.result': 'deadline' }, 1],
        [{ ...route, 'spillway.result': 'deadline' }, 1],
        [{ ...critical, 'spillway.result': 'quota' }, 1],
        [{ ...route, 'spillway.result': 'overloaded', 'spillway.criticality': 'sheddable' }, 1],
      ]),
    );
    expect(points(m, n.requests)).toHaveLength(6);
    expect(points(m, n.falsePositive)).toEqual([
      [{ ...route, 'spillway.result': 'overloaded', 'spillway.criticality': 'sheddable' }, 1],
    ]);
    expect(points(m, n.activeRequests)).toEqual([[route, 0]]);
    expect(points(m, n.queuedRequests)).toEqual([[route, 0]]);
    const inLine = points(m, n.timeInQueue);
    expect(inLine).toHaveLength(3);
    expect(inLine).toEqual(
      expect.arrayContaining([
        [
          { ...route, 'spillway.result': 'admitted' },
          { count: 1, sum: 0.03 },
        ],
        [
          { ...route, 'spillway.result': 'deadline' },
          { count: 1, sum: 0.05 },
        ],
        [
          { ...route, 'spillway.result': 'capacity' },
          { count: 1, sum: 0.1 },
        ],
      ]),
    );
    // A held its slot 30 ms, B 150 ms (from t = 30 to t = 180), Q no time at all.
    const leases = points(m, n.leaseDuration) as [Attributes, { count: number; sum: number }][];
    expect(leases).toHaveLength(1);
    const [leaseAttrs, lease] = leases[0]!;
    expect(leaseAttrs).toEqual(route);
    expect(lease.count).toBe(3);
    expect(lease.sum).toBeCloseTo(0.18, 9);
    expect(points(m, n.quotaDecisions)).toEqual(
      expect.arrayContaining([
        [{ ...route, 'spillway.result': 'allowed', 'spillway.store.degraded': false }, 7],
        [{ ...route, 'spillway.result': 'quota', 'spillway.store.degraded': false }, 1],
      ]),
    );
    expect(points(m, n.limit)).toContainEqual([route, 1]);
    const buckets = m.get(n.timeInQueue)!.dataPoints[0]!.value as {
      buckets: { boundaries: number[] };
    };
    expect(buckets.buckets.boundaries).toEqual([
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
    ]);
  });

  it('records attempts, retries and a breaker opening, and reads the budget', async () => {
    await tracer.startActiveSpan('call flaky', async (span) => {
      expect((await users.fetch('/flaky')).status).toBe(200);
      span.end();
    });
    expect((await users.fetch('/broken')).status).toBe(500);
    expect((await users.fetch('/broken')).status).toBe(500);
    await tracer.startActiveSpan('call open', async (span) => {
      await expect(users.fetch('/anything')).rejects.toBeInstanceOf(CircuitOpenError);
      span.end();
    });

    const m = await collect();
    const users_ = { 'spillway.dependency': 'users' };
    expect(points(m, n.attempts)).toEqual(
      expect.arrayContaining([
        [{ ...users_, 'spillway.outcome': 'refused', 'spillway.retry': false }, 1],
        [{ ...users_, 'spillway.outcome': 'ok', 'spillway.retry': true }, 1],
        [{ ...users_, 'spillway.outcome': 'bad-answer', 'spillway.retry': false }, 2],
        [{ ...users_, 'spillway.outcome': 'local', 'spillway.retry': false }, 1],
      ]),
    );
    expect(points(m, n.attempts)).toHaveLength(4);
    expect(points(m, n.circuitState)).toEqual(
      expect.arrayContaining([
        [{ ...users_, 'spillway.state': 'closed' }, 0],
        [{ ...users_, 'spillway.state': 'open' }, 1],
        [{ ...users_, 'spillway.state': 'half-open' }, 0],
      ]),
    );
    expect(points(m, n.retryBudget)).toEqual([[users_, users.budget.available]]);
    expect(users.budget.available).toBeLessThan(10);
    expect(points(m, n.limit)).toContainEqual([users_, 64]);
  });

  it('gives every instrument its kind and unit, and never the client key', async () => {
    const m = await collect();
    const want: Record<string, [InstrumentType, DataPointType, string]> = {
      [n.requests]: [InstrumentType.COUNTER, DataPointType.SUM, '{request}'],
      [n.activeRequests]: [InstrumentType.UP_DOWN_COUNTER, DataPointType.SUM, '{request}'],
      [n.queuedRequests]: [InstrumentType.UP_DOWN_COUNTER, DataPointType.SUM, '{request}'],
      [n.timeInQueue]: [InstrumentType.HISTOGRAM, DataPointType.HISTOGRAM, 's'],
      [n.leaseDuration]: [InstrumentType.HISTOGRAM, DataPointType.HISTOGRAM, 's'],
      [n.falsePositive]: [InstrumentType.COUNTER, DataPointType.SUM, '{request}'],
      [n.limit]: [InstrumentType.OBSERVABLE_GAUGE, DataPointType.GAUGE, '{request}'],
      [n.attempts]: [InstrumentType.COUNTER, DataPointType.SUM, '{attempt}'],
      [n.retryBudget]: [InstrumentType.OBSERVABLE_GAUGE, DataPointType.GAUGE, '{retry}'],
      [n.circuitState]: [InstrumentType.OBSERVABLE_GAUGE, DataPointType.GAUGE, '1'],
      [n.quotaDecisions]: [InstrumentType.COUNTER, DataPointType.SUM, '{decision}'],
    };
    expect([...m.keys()].sort()).toEqual(Object.keys(want).sort());
    for (const [name, [type, points_, unit]] of Object.entries(want)) {
      const d = m.get(name)!;
      // The SDK's descriptor carries the instrument's kind, though its public type omits it.
      const kind = (d.descriptor as { readonly type?: unknown }).type;
      expect([kind, d.dataPointType, d.descriptor.unit], name).toEqual([type, points_, unit]);
      if (d.dataPointType === DataPointType.SUM) {
        expect(d.isMonotonic, name).toBe(type === InstrumentType.COUNTER);
      }
      for (const p of d.dataPoints) {
        expect(Object.values(p.attributes), name).not.toContain('a');
        expect(
          Object.keys(p.attributes).some((k) => k.includes('key')),
          name,
        ).toBe(false);
      }
    }
  });

  it('marks the active spans of refused, queued and shed requests, and of retries', () => {
    const byName = new Map(spans.getFinishedSpans().map((s) => [s.name, s]));
    const attrs = (client: string) => byName.get(`request ${client}`)!.attributes;
    // Let straight through: left alone.
    expect(Object.keys(attrs('a')).filter((k) => k.startsWith('spillway.'))).toEqual([]);
    expect(attrs('b')).toMatchObject({
      'spillway.result': 'admitted',
      'spillway.queued': true,
      'spillway.time_in_queue_ms': 30,
    });
    expect(attrs('c')).toMatchObject({
      'spillway.result': 'capacity',
      'spillway.queued': false,
      'spillway.signal': 'later',
    });
    expect(attrs('d')).toMatchObject({
      'spillway.result': 'deadline',
      'spillway.queued': true,
      'spillway.time_in_queue_ms': 50,
      'spillway.signal': 'never',
    });
    expect(attrs('q')).toMatchObject({ 'spillway.result': 'quota', 'spillway.signal': 'later' });
    expect(attrs('s')).toMatchObject({
      'spillway.result': 'overloaded',
      'spillway.criticality': 'sheddable',
    });
    const retry = byName.get('call flaky')!.events;
    expect(retry.map((e) => e.name)).toEqual(['spillway.retry']);
    expect(retry[0]!.attributes).toMatchObject({
      'spillway.dependency': 'users',
      'spillway.attempt': 2,
      'spillway.retry_budget': expect.any(Number) as number,
    });
    expect(retry[0]!.attributes!['spillway.backoff_ms']).toBeGreaterThanOrEqual(0);
    expect(byName.get('call open')!.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'spillway.local_refusal',
        {
          'spillway.dependency': 'users',
          'spillway.attempt': 1,
          'spillway.local_reason': 'circuit-open',
        },
      ],
    ]);
  });

  it('stops recording once closed, and refuses bad options by name', async () => {
    metrics.close();
    metrics[Symbol.dispose]();
    const before = points(await collect(), n.requests);
    expect((await send(port, as('z'))).status).toBe(200);
    expect(points(await collect(), n.requests)).toEqual(before);
    expect(() => otelMetrics({ meterProvider: {} as never })).toThrow(/meterProvider/);
    expect(() => otelMetrics({ routes: [{}] as never })).toThrow(/routes/);
    expect(() => otelMetrics({ dependencies: 'users' as never })).toThrow(/dependencies/);
  });
});
