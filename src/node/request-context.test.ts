import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, DependencyOverloadedError, type PermitOutcome } from '../index.js';
import { createVirtualClock } from '../testing/index.js';
import { Admitted, ClientDisconnectedError } from './request-context.js';

/** A context on a response to nobody: the route allows 100 ms; the client asked for `askedMs`. */
function admitted(askedMs?: number) {
  const clock = createVirtualClock();
  const req = new IncomingMessage(new Socket());
  const res = new ServerResponse(req);
  const outcomes: PermitOutcome[] = [];
  const context = new Admitted({
    clock,
    expiresAt: askedMs ?? 100,
    routeExpiresAt: 100,
    criticality: 'critical',
    attempt: 1,
    key: 'k',
    route: 'r',
    req,
    res,
    startedAt: 0,
    onFinish: (_c, outcome) => void outcomes.push(outcome),
  });
  return { clock, res, context, outcomes };
}

const fail = (error: unknown) => ({ error });

describe('Admitted: what an ended request tells an adaptive limit', () => {
  it('the route’s own maximum passing is a drop', async () => {
    const { clock, context } = admitted();
    context.start(undefined);
    await clock.advance(100);
    expect(context.abortCause).toBe('route-deadline');
    expect(context.outcomeOf()).toBe('dropped');
    expect(context.outcomeOf(fail(new DeadlineExceededError()))).toBe('dropped');
  });

  it('a shorter deadline the client asked for is not, whatever the work did then', async () => {
    const { clock, context } = admitted(5);
    context.start(undefined);
    await clock.advance(5);
    expect(context.abortCause).toBe('client-deadline');
    expect(context.signal.reason).toBeInstanceOf(DeadlineExceededError);
    expect(context.outcomeOf()).toBe('ignored');
    expect(context.outcomeOf(fail(new DeadlineExceededError()))).toBe('ignored');
    expect(context.outcomeOf(fail(new DependencyOverloadedError('x', { signal: 'later' })))).toBe(
      'ignored',
    );
  });

  it('a dependency refusing for want of the client’s time is not; for want of the route’s, it is', () => {
    const short = admitted(5).context.start(undefined);
    expect(short.outcomeOf(fail(new DeadlineExceededError()))).toBe('ignored');
    // Overload downstream within the client's time still counts.
    const overloaded = new DependencyOverloadedError('busy', { signal: 'later' });
    expect(short.outcomeOf(fail(overloaded))).toBe('dropped');
    const full = admitted().context.start(undefined);
    expect(full.outcomeOf(fail(new DeadlineExceededError()))).toBe('dropped');
    expect(full.outcomeOf(fail(new Error('a bug')))).toBe('ignored');
    expect(full.outcomeOf()).toBe('ok');
  });

  it('a disconnect is not, and settle() reports what outcomeOf says', () => {
    const { res, context, outcomes } = admitted();
    context.start(undefined);
    res.emit('close');
    expect(context.abortCause).toBe('disconnect');
    expect(context.signal.reason).toBeInstanceOf(ClientDisconnectedError);
    context.settle(fail(new DependencyOverloadedError('busy', { signal: 'later' })));
    context.settle();
    expect(outcomes).toEqual(['ignored']);
  });

  it('a client gone before the context starts aborts its signal at once', () => {
    const { res, context } = admitted();
    res.destroy();
    context.start(undefined);
    expect(context.signal.aborted).toBe(true);
    expect(context.abortCause).toBe('disconnect');
  });
});

describe('Admitted: a thrown value that throws when read', () => {
  it('still finishes, as a failure that says nothing about load', () => {
    const { context, outcomes } = admitted();
    context.start(undefined);
    const hostile = {
      get status(): number {
        throw new Error('read me not');
      },
    };
    expect(() => context.settle(fail(hostile))).not.toThrow();
    expect([context.finished, outcomes]).toEqual([true, ['ignored']]);
  });
});

describe('Admitted: its signal, whenever it is read', () => {
  it('read before the deadline, it fires once with the deadline, and stays the same signal', async () => {
    const { clock, res, context } = admitted();
    context.start(undefined);
    const signal = context.signal;
    const reasons: unknown[] = [];
    signal.addEventListener('abort', () => reasons.push(signal.reason));
    expect(signal.aborted).toBe(false);
    await clock.advance(100);
    res.emit('close'); // too late to change anything: the first cause stands
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(DeadlineExceededError);
    expect(context.signal).toBe(signal);
    expect(context.abortCause).toBe('route-deadline');
  });

  it('read only after a disconnect and a deadline, it carries the first of them', async () => {
    const { clock, res, context } = admitted();
    context.start(undefined);
    res.emit('close');
    await clock.advance(100);
    expect(context.abortCause).toBe('disconnect');
    expect(context.signal.aborted).toBe(true);
    expect(context.signal.reason).toBeInstanceOf(ClientDisconnectedError);
  });
});

describe('Admitted: its ambient context', () => {
  it('reads the signal through, the same signal at any time, and holds nothing of the request', async () => {
    const { clock, res, context } = admitted();
    context.start(undefined);
    const ambient = context.ambient();
    expect(ambient).toMatchObject({ expiresAt: 100, criticality: 'critical', attempt: 1 });
    expect(ambient.clock).toBe(clock);
    await clock.advance(100);
    expect(ambient.signal).toBe(context.signal);
    expect(ambient.signal?.reason).toBeInstanceOf(DeadlineExceededError);
    // A timer the handler leaves behind keeps this object alive: it must not keep the request.
    expect(Object.values(ambient)).not.toContain(res);
    expect(Object.values(ambient)).not.toContain(context);
  });
});
