// `spillway/grpc`'s server guard over real gRPC on loopback (no services needed beyond the
// test's own): admitted calls carry their context (criticality and attempt from metadata, the
// call's own deadline); quota, capacity and spent-deadline refusals as RESOURCE_EXHAUSTED,
// UNAVAILABLE and DEADLINE_EXCEEDED with pushback and `spillway-retry` trailers; the handler's
// signal on deadline and cancellation; the slot held until the handler settles; a dependency's
// overload passed up; ordinary failures passed through; exempt health checks.
import { Metadata, status, type ServerUnaryCall } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError, systemClock } from '../../src/index.js';
import type { RequestContext } from '../../src/node/index.js';
import { grpcAdmission, type GrpcAdmissionOptions } from '../../src/grpc/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import {
  client,
  closedAfter,
  metadataOf,
  startServer,
  unary,
  until,
  type EchoReply,
  type EchoRequest,
} from './services.js';

const closing = closedAfter();

/** A guarded echo server whose handler records contexts and can hold calls. */
async function start(options: GrpcAdmissionOptions = {}) {
  const guard = grpcAdmission({ clock: createVirtualClock(), penaltyBox: false, ...options });
  closing(guard);
  const contexts: RequestContext[] = [];
  const held: (() => void)[] = [];
  const ended: string[] = [];
  let fail: ((call: ServerUnaryCall<EchoRequest, EchoReply>) => unknown) | undefined;
  const handler = async (
    call: ServerUnaryCall<EchoRequest, EchoReply>,
    context: RequestContext,
  ): Promise<EchoReply> => {
    contexts.push(context);
    if (fail !== undefined) throw fail(call);
    if (call.request.hold === true) {
      await new Promise<void>((resolve) => held.push(resolve));
      ended.push(context.signal.aborted ? 'aborted' : 'done');
    }
    return { text: call.request.text };
  };
  const server = await startServer({ echo: guard.unary(handler), again: guard.unary(handler) });
  closing(server);
  return {
    guard,
    contexts,
    held,
    ended,
    c: client(server.address),
    failWith: (f: (call: ServerUnaryCall<EchoRequest, EchoReply>) => unknown) => (fail = f),
  };
}

describe('grpcAdmission: admitted calls', () => {
  it('runs the handler with the call context: criticality and attempt from metadata, the gRPC deadline', async () => {
    // The real clock: the call's deadline is a wall-clock time, and the trip takes real time.
    const s = await start({ criticality: { ceiling: 'critical' }, clock: systemClock });
    const out = await unary(
      s.c,
      { text: 'hi' },
      {
        metadata: metadataOf({ 'spillway-criticality': 'sheddable', 'spillway-attempt': '2' }),
        options: { deadline: Date.now() + 5_000 },
      },
    );
    expect(out.code).toBe(status.OK);
    expect(out.value).toEqual({ text: 'hi' });
    const [context] = s.contexts;
    expect(context!.criticality).toBe('sheddable');
    expect(context!.attempt).toBe(2);
    // The call's own deadline (5 s, less the trip), not the route's 30 s.
    expect(context!.remainingMs()).toBeLessThanOrEqual(5_000);
    expect(context!.remainingMs()).toBeGreaterThan(3_000);
    expect(context!.route).toBe('default');
    expect(s.guard.admission.inflight).toBe(0);
  });

  it('never lets a client claim more than the ceiling, and reads a repeated field as absent', async () => {
    const s = await start({ criticality: { ceiling: 'critical' } });
    const metadata = new Metadata();
    metadata.add('spillway-attempt', '2');
    metadata.add('spillway-attempt', '3');
    metadata.set('spillway-criticality', 'critical-plus');
    await unary(s.c, { text: 'x' }, { metadata });
    expect(s.contexts[0]!.criticality).toBe('critical');
    expect(s.contexts[0]!.attempt).toBe(1);
  });
});

describe('grpcAdmission: refusals', () => {
  it('a spent quota is RESOURCE_EXHAUSTED with a pushback and the RateLimit fields', async () => {
    const s = await start({ quota: { ratePerSec: 1, burst: 1 } });
    const admitted = await unary(s.c, { text: 'a' });
    expect(admitted.code).toBe(status.OK);
    // Admitted answers carry the fields too, as trailers.
    expect(admitted.trailers['ratelimit']).toBe('"default";r=0;t=1');
    const out = await unary(s.c, { text: 'b' });
    expect(out.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(out.trailers['spillway-retry']).toBe('later');
    expect(Number(out.trailers['grpc-retry-pushback-ms'])).toBeGreaterThanOrEqual(1);
    expect(out.trailers['ratelimit-policy']).toBe('"default";q=1;w=1');
    expect(out.trailers['ratelimit']).toMatch(/^"default";r=0;t=1$/);
    expect(s.contexts).toHaveLength(1);
  });

  it('a full route is UNAVAILABLE `later`; the slot is held until the handler settles, cancelled or not', async () => {
    const s = await start({ limit: 1, maxQueue: 0 });
    let cancel!: () => void;
    const first = unary(
      s.c,
      { text: 'a', hold: true },
      { onCall: (call) => (cancel = () => call.cancel()) },
    );
    await until(() => s.held.length === 1);
    const refused = await unary(s.c, { text: 'b' });
    expect(refused.code).toBe(status.UNAVAILABLE);
    expect(refused.trailers['spillway-retry']).toBe('later');
    expect(refused.trailers['grpc-retry-pushback-ms']).toMatch(/^[1-9]\d*$/);
    // The client gives up: its handler is told, but still holds the slot while it winds down.
    cancel();
    expect((await first).code).toBe(status.CANCELLED);
    await until(() => s.contexts[0]!.signal.aborted);
    expect((await unary(s.c, { text: 'c' })).code).toBe(status.UNAVAILABLE);
    expect(s.guard.admission.stats()!.active).toBe(1);
    s.held.shift()!();
    await until(() => s.guard.admission.stats()!.active === 0);
    expect(s.ended).toEqual(['aborted']);
    expect((await unary(s.c, { text: 'd' })).code).toBe(status.OK);
  });

  it('a spent deadline is DEADLINE_EXCEEDED with a negative pushback (`never`)', async () => {
    const s = await start();
    const out = await unary(
      s.c,
      { text: 'a' },
      { metadata: metadataOf({ 'spillway-deadline': '0' }) },
    );
    expect(out.code).toBe(status.DEADLINE_EXCEEDED);
    expect(out.trailers['spillway-retry']).toBe('never');
    expect(out.trailers['grpc-retry-pushback-ms']).toBe('-1');
    expect(s.contexts).toHaveLength(0);
  });

  it('less critical calls are shed from a full line first (UNAVAILABLE)', async () => {
    const s = await start({ limit: 1, maxQueue: 2, maxQueueWaitMs: 10_000 });
    void unary(s.c, { text: 'a', hold: true });
    await until(() => s.held.length === 1);
    const shed = await unary(
      s.c,
      { text: 'b' },
      {
        metadata: metadataOf({ 'spillway-criticality': 'sheddable' }),
      },
    );
    expect(shed.code).toBe(status.UNAVAILABLE);
    expect(shed.details).toMatch(/less critical/);
    s.held.shift()!();
  });
});

describe('grpcAdmission: the handler signal', () => {
  it('fires at the call’s gRPC deadline', async () => {
    const clock = createVirtualClock({ wallStart: Date.now() });
    const guard = grpcAdmission({ clock, penaltyBox: false });
    closing(guard);
    let seen: RequestContext | undefined;
    const server = await startServer({
      echo: guard.unary(async (_call, context) => {
        seen = context;
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve));
        throw context.signal.reason;
      }),
    });
    closing(server);
    const call = unary(
      client(server.address),
      { text: 'a' },
      {
        options: { deadline: Date.now() + 60_000 },
      },
    );
    await until(() => seen !== undefined);
    await clock.advance(60_000);
    expect(seen!.signal.aborted).toBe(true);
    const out = await call;
    expect(out.code).toBe(status.DEADLINE_EXCEEDED);
  });

  it('fires when the client cancels', async () => {
    const s = await start();
    let cancel!: () => void;
    const call = unary(
      s.c,
      { text: 'a', hold: true },
      { onCall: (c) => (cancel = () => c.cancel()) },
    );
    await until(() => s.held.length === 1);
    cancel();
    await until(() => s.contexts[0]!.signal.aborted);
    s.held.shift()!();
    expect((await call).code).toBe(status.CANCELLED);
  });
});

describe('grpcAdmission: failures', () => {
  it('passes a dependency’s overload up: `never` after a layer below retried', async () => {
    const s = await start();
    s.failWith(
      () =>
        new DependencyOverloadedError('C refused', {
          signal: 'later',
          retryAfterMs: 500,
          dependency: 'C',
          attempts: 2,
        }),
    );
    const out = await unary(s.c, { text: 'a' });
    expect(out.code).toBe(status.UNAVAILABLE);
    expect(out.trailers['spillway-retry']).toBe('never');
    expect(out.trailers['grpc-retry-pushback-ms']).toBe('-1');
  });

  // A long pushback is stated in whole seconds, as an HTTP refusal states a long wait.
  it.each([
    ['250', '250'],
    ['12345', '13000'],
  ])(
    'passes a gRPC dependency’s refusal up with its own pushback (%s ms: %s)',
    async (given, stated) => {
      const s = await start();
      s.failWith(() =>
        Object.assign(new Error('14 UNAVAILABLE: busy'), {
          code: status.UNAVAILABLE,
          details: 'busy',
          metadata: metadataOf({ 'grpc-retry-pushback-ms': given }),
        }),
      );
      const out = await unary(s.c, { text: 'a' });
      expect(out.code).toBe(status.UNAVAILABLE);
      expect(out.trailers['spillway-retry']).toBe('later');
      expect(out.trailers['grpc-retry-pushback-ms']).toBe(stated);
    },
  );

  it('passes an ordinary failure through as grpc-js answers it', async () => {
    const s = await start();
    s.failWith(() => ({ code: status.NOT_FOUND, details: 'no such user' }));
    const out = await unary(s.c, { text: 'a' });
    expect(out.code).toBe(status.NOT_FOUND);
    expect(out.details).toBe('no such user');
    expect(out.trailers['spillway-retry']).toBeUndefined();
    expect(s.guard.admission.inflight).toBe(0);
  });

  it('answers INTERNAL when admission itself fails, and tells onError about the call', async () => {
    const told: string[] = [];
    const s = await start({
      key: () => {
        throw new Error('no key');
      },
      quota: { ratePerSec: 10, burst: 10 },
      onError: (error, call) => told.push(`${call.path}: ${(error as Error).message}`),
    });
    const out = await unary(s.c, { text: 'a' });
    expect(out.code).toBe(status.INTERNAL);
    expect(told).toEqual(['/test.Echo/Echo: no key']);
  });
});

describe('grpcAdmission: routes and exemptions', () => {
  it('matches routes on the method path', async () => {
    const s = await start({ routes: [{ match: '/test.Echo/Again', limit: 1, name: 'again' }] });
    await unary(s.c, { text: 'a' }, { name: 'again' });
    await unary(s.c, { text: 'b' });
    expect(s.contexts.map((c) => c.route)).toEqual(['again', 'default']);
  });
});
