import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SpillwayArgumentError } from '../errors/argument-error.js';
import { GateClosedError } from '../errors/gate-closed-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { creditGate } from './credit-gate.js';

/** Lets settled promises' callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('creditGate', () => {
  it('moves nothing until credit is granted, then one item per credit, oldest sender first', async () => {
    const gate = creditGate({ maxCredit: 10 });
    expect(gate.tryTake()).toBe(false);
    const sent: number[] = [];
    const sends = [1, 2, 3].map((i) => gate.send().then(() => sent.push(i)));
    await settle();
    expect(sent).toEqual([]);
    expect(gate.waiting).toBe(3);
    gate.request(2);
    await settle();
    expect(sent).toEqual([1, 2]);
    gate.request(5);
    await Promise.all(sends);
    expect(sent).toEqual([1, 2, 3]);
    expect(gate.credit).toBe(4);
    expect(gate.tryTake()).toBe(true);
    expect(gate.credit).toBe(3);
  });

  it('never holds more than maxCredit; initialCredit counts', () => {
    const gate = creditGate({ initialCredit: 2, maxCredit: 3 });
    expect(gate.credit).toBe(2);
    gate.request(5);
    expect(gate.credit).toBe(3);
    gate.request(Infinity);
    expect(gate.credit).toBe(3);
  });

  it('tryTake does not barge past a waiting sender', async () => {
    const gate = creditGate({ maxCredit: 2 });
    const waiting = gate.send();
    gate.request(1);
    expect(gate.tryTake()).toBe(false); // the credit went to the waiter
    await waiting;
  });

  it('request(n <= 0) fails the gate: the error reaches the sender, not the receiver', async () => {
    const gate = creditGate({ maxCredit: 4 });
    const waiting = gate.send();
    expect(() => gate.request(0)).not.toThrow();
    await expect(waiting).rejects.toBeInstanceOf(SpillwayArgumentError);
    await expect(waiting).rejects.toThrow(/`n` to be a positive integer \(rule 3\.9\), got 0/);
    await expect(gate.send()).rejects.toBeInstanceOf(SpillwayArgumentError);
    expect(() => gate.tryTake()).toThrow(SpillwayArgumentError);
    expect(gate.state).toBe('failed');
    gate.request(3); // after the end, a no-op
    expect(gate.credit).toBe(0);
    for (const bad of [-1, 1.5, Number.NaN, '2']) {
      const g = creditGate({ maxCredit: 4 });
      g.request(bad as number);
      expect(g.state).toBe('failed');
    }
  });

  it('cancel rejects the waiting and later sends with GateClosedError carrying the reason', async () => {
    const gate = creditGate({ initialCredit: 1, maxCredit: 4 });
    await gate.send();
    const waiting = gate.send();
    const why = new Error('consumer stopped');
    gate.cancel(why);
    gate.cancel(); // idempotent
    await expect(waiting).rejects.toBeInstanceOf(GateClosedError);
    await expect(waiting).rejects.toMatchObject({ reason: 'cancelled', cause: why });
    await expect(gate.send()).rejects.toMatchObject({ code: 'SPILLWAY_E_GATE_CLOSED' });
    expect(() => gate.tryTake()).toThrow(GateClosedError);
    gate.request(2);
    expect(gate.credit).toBe(0);
    expect(gate.state).toBe('cancelled');
  });

  it('after complete, sends reject; complete after cancel changes nothing', async () => {
    const gate = creditGate({ initialCredit: 3, maxCredit: 4 });
    gate.complete();
    await expect(gate.send()).rejects.toMatchObject({ reason: 'completed' });
    gate.cancel();
    expect(gate.state).toBe('completed');
  });

  it('bounds the line of senders', async () => {
    const gate = creditGate({ maxCredit: 1, maxWaiting: 2 });
    const waiting = [gate.send(), gate.send()];
    const full = gate.send();
    await expect(full).rejects.toBeInstanceOf(WaitLineFullError);
    await expect(full).rejects.toMatchObject({ code: 'SPILLWAY_E_WAIT_LINE_FULL', maxWaiting: 2 });
    gate.request(1);
    gate.request(1);
    await Promise.all(waiting);
  });

  it('an aborted sender leaves at once, spends nothing and leaves no listener', async () => {
    const gate = creditGate({ maxCredit: 4 });
    const c = new AbortController();
    const aborted = gate.send({ signal: c.signal });
    const next = gate.send();
    c.abort(new Error('sender gave up'));
    await expect(aborted).rejects.toThrow('sender gave up');
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
    expect(gate.waiting).toBe(1);
    gate.request(1);
    await next; // the credit went to the one still waiting
    expect(gate.credit).toBe(0);
    const reason = new Error('before');
    await expect(gate.send({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(gate.waiting).toBe(0);
    // A sender served and then aborted keeps its credit and leaves no listener either.
    const later = new AbortController();
    const served = gate.send({ signal: later.signal });
    gate.request(1);
    later.abort();
    await expect(served).resolves.toBeUndefined();
    expect(getEventListeners(later.signal, 'abort')).toHaveLength(0);
  });

  it('bad options fail at construction, naming the option and the value', () => {
    expect(() => creditGate({ maxCredit: 0 })).toThrow(
      /Expected `maxCredit` to be a positive integer, got 0 \(number\)/,
    );
    expect(() => creditGate({} as never)).toThrow(/`maxCredit`.*got undefined/);
    expect(() => creditGate({ maxCredit: 2, initialCredit: 3 })).toThrow(
      /Expected `initialCredit` to be at most maxCredit \(2\), got 3 \(number\)/,
    );
    expect(() => creditGate({ maxCredit: 2, initialCredit: -1 })).toThrow(/`initialCredit`/);
    expect(() => creditGate({ maxCredit: 2, maxWaiting: 1.5 })).toThrow(
      /Expected `maxWaiting` to be an integer of 0 or more, got 1\.5 \(number\)/,
    );
  });

  it('a bad signal is refused', async () => {
    const gate = creditGate({ maxCredit: 1 });
    await expect(gate.send({ signal: {} as never })).rejects.toThrow(/`signal`/);
  });
});
