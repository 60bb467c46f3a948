// `grpcAdmission`'s server interceptor over real gRPC on loopback: streaming calls admitted
// before the handler runs (refused ones never reach it), their slot held until the status is
// sent or the call is cancelled, their context reachable with `contextOf`; a plain unary
// handler behind it; and a unary handler that `guard.unary` also wraps, admitted once and
// handed over (the slot then held until the handler settles).
import {
  Metadata,
  status,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
} from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { RequestContext } from '../../src/node/index.js';
import { grpcAdmission } from '../../src/grpc/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import {
  client,
  closedAfter,
  startServer,
  unary,
  until,
  type Echo,
  type EchoReply,
  type EchoRequest,
} from './services.js';

const closing = closedAfter();

async function start() {
  const guard = grpcAdmission({
    clock: createVirtualClock(),
    penaltyBox: false,
    limit: 1,
    maxQueue: 0,
  });
  closing(guard);
  const held: (() => void)[] = [];
  const streams: (RequestContext | undefined)[] = [];
  const unaries: RequestContext[] = [];
  let plainCalls = 0;
  const hold = () => new Promise<void>((resolve) => held.push(resolve));
  const server = await startServer(
    {
      // A streaming handler the interceptor admits: one message, then held until released.
      watch: (call: ServerWritableStream<EchoRequest, EchoReply>) => {
        streams.push(guard.contextOf(call));
        call.write({ text: 'first' });
        void hold().then(() => call.end());
      },
      // A unary handler the wrapper also guards.
      echo: guard.unary(async (call: ServerUnaryCall<EchoRequest, EchoReply>, context) => {
        unaries.push(context);
        if (call.request.hold === true) await hold();
        return { text: call.request.text };
      }),
      // A plain unary handler: only the interceptor guards it.
      again: (
        call: ServerUnaryCall<EchoRequest, EchoReply>,
        callback: (e: null, v: EchoReply) => void,
      ) => {
        plainCalls++;
        if (call.request.hold === true) void hold().then(() => callback(null, { text: 'late' }));
        else callback(null, { text: call.request.text });
      },
    },
    [guard.interceptor],
  );
  closing(server);
  return {
    guard,
    held,
    streams,
    unaries,
    plainCalls: () => plainCalls,
    c: client(server.address),
    active: () => guard.admission.stats()!.active,
  };
}

/** Opens a server stream and resolves with its first message (or its error). */
function openStream(c: Echo) {
  const stream = c.watch({ text: 'w' }, new Metadata());
  const first = new Promise<EchoReply | ServiceError>((resolve) => {
    stream.once('data', (m: EchoReply) => resolve(m));
    stream.once('error', (e: ServiceError) => resolve(e));
  });
  const ended = new Promise<number>((resolve) =>
    stream.on('status', (s: { code: number }) => resolve(s.code)),
  );
  stream.on('error', () => {});
  return { stream, first, ended };
}

describe('grpcAdmission: the interceptor', () => {
  it('admits a streaming call before its handler runs, and holds the slot until its status', async () => {
    const s = await start();
    const open = openStream(s.c);
    expect(await open.first).toEqual({ text: 'first' });
    expect(s.active()).toBe(1);
    // Its context is the handler's for the asking.
    expect(s.streams[0]?.signal.aborted).toBe(false);
    // Full: the next call is refused by the interceptor, and its handler never runs.
    const refused = openStream(s.c);
    const error = (await refused.first) as ServiceError;
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.metadata.get('spillway-retry')).toEqual(['later']);
    expect(s.streams).toHaveLength(1);
    s.held.shift()!();
    expect(await open.ended).toBe(status.OK);
    await until(() => s.active() === 0);
  });

  it('lets go of a streaming call’s slot when the call is cancelled, aborting its context', async () => {
    const s = await start();
    const open = openStream(s.c);
    await open.first;
    open.stream.cancel();
    await until(() => s.active() === 0);
    expect(s.streams[0]!.signal.aborted).toBe(true);
    expect(await openStream(s.c).first).toEqual({ text: 'first' });
    s.held.splice(0).forEach((f) => f());
  });

  it('guards a plain unary handler until it answers', async () => {
    const s = await start();
    const first = unary(s.c, { text: 'a', hold: true }, { name: 'again' });
    await until(() => s.plainCalls() === 1);
    const refused = await unary(s.c, { text: 'b' }, { name: 'again' });
    expect(refused.code).toBe(status.UNAVAILABLE);
    expect(s.plainCalls()).toBe(1);
    s.held.shift()!();
    expect((await first).code).toBe(status.OK);
    await until(() => s.active() === 0);
  });

  it('hands a wrapped unary call over to the wrapper: admitted once, held until the handler settles', async () => {
    const s = await start();
    let cancel!: () => void;
    const first = unary(
      s.c,
      { text: 'a', hold: true },
      { onCall: (c) => (cancel = () => c.cancel()) },
    );
    await until(() => s.unaries.length === 1);
    // One slot taken, not two (the limit is 1: a second admission would have been refused).
    expect(s.active()).toBe(1);
    cancel();
    expect((await first).code).toBe(status.CANCELLED);
    await until(() => s.unaries[0]!.signal.aborted);
    // Cancelled, but its handler still works: the slot stays taken until it settles.
    expect((await unary(s.c, { text: 'b' })).code).toBe(status.UNAVAILABLE);
    s.held.shift()!();
    await until(() => s.active() === 0);
    expect((await unary(s.c, { text: 'c' })).code).toBe(status.OK);
    expect(s.unaries).toHaveLength(2);
  });
});
