// The gate's timing on a virtual clock, over a scripted client whose calls settle only when
// the test says so: the deadline answers at once and exactly on time, the in-flight cap counts
// calls until they really settle, and the breaker opens, probes only when connected, and
// closes. (The same behaviour against real Redis faults is in test/redis/faults.test.ts.)
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../testing/virtual-clock.js';
import { CallGate, isFailure, type CallFailure } from './call-gate.js';
import type { ScriptClient } from './script-client.js';
import { gcraScript } from './scripts.js';

function scripted() {
  const calls: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  let ready = true;
  const client: ScriptClient = {
    run: () =>
      new Promise((resolve, reject) => {
        calls.push({ resolve, reject });
      }),
    ready: () => ready,
  };
  return {
    client,
    calls,
    setReady: (r: boolean) => {
      ready = r;
    },
  };
}

function gate(client: ScriptClient, maxInFlight = 3) {
  const clock = createVirtualClock();
  const failures: string[] = [];
  const breaker: string[] = [];
  const g = new CallGate({
    client,
    clock,
    timeoutMs: 100,
    maxInFlight,
    breakerFailures: 2,
    breakerCooldownMs: 250,
    onFailure: (f) => failures.push(f.failed),
    onBreaker: (s) => breaker.push(s),
  });
  return { g, clock, failures, breaker };
}

const call = (g: CallGate) => g.call(gcraScript, { keys: ['k'], args: [1, 1, 1, 1] });

describe('CallGate', () => {
  it('passes replies through as numbers', async () => {
    const s = scripted();
    const { g } = gate(s.client);
    const p = call(g);
    s.calls[0]!.resolve([1, 2n, 3]);
    expect(await p).toEqual([1, 2, 3]);
    expect(g.inFlight).toBe(0);
  });

  it('answers a call Redis does not answer exactly at the deadline', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    let settled: number[] | CallFailure | undefined;
    void call(g).then((r) => (settled = r));
    await clock.advance(99);
    expect(settled).toBeUndefined();
    await clock.advance(1);
    expect(settled).toEqual({ failed: 'timeout' });
    // Still in flight until the client gives up: a stalled Redis cannot pile up commands.
    expect(g.inFlight).toBe(1);
    s.calls[0]!.resolve([1]);
    await clock.flush();
    expect(g.inFlight).toBe(0);
  });

  it('refuses past maxInFlight at once, without touching the breaker', async () => {
    const s = scripted();
    const { g, failures } = gate(s.client, 2);
    void call(g);
    void call(g);
    expect(await call(g)).toEqual({ failed: 'saturated' });
    expect(await call(g)).toEqual({ failed: 'saturated' });
    expect(g.breakerState).toBe('closed');
    expect(failures).toEqual(['saturated', 'saturated']);
  });

  it('opens after consecutive failures, probes once connected after the cool-down, closes', async () => {
    const s = scripted();
    const { g, clock, breaker } = gate(s.client, 10);
    const a = call(g);
    const b = call(g);
    s.calls[0]!.reject(new Error('ECONNRESET'));
    s.calls[1]!.reject(new Error('ECONNRESET'));
    expect(isFailure(await a) && isFailure(await b)).toBe(true);
    expect(g.breakerState).toBe('open');
    expect(breaker).toEqual(['open']);
    expect(await call(g)).toEqual({ failed: 'breaker-open' });
    expect(s.calls.length).toBe(2);
    s.setReady(false);
    await clock.advance(300);
    expect(await call(g)).toEqual({ failed: 'breaker-open' }); // no probe while disconnected
    s.setReady(true);
    const probe = call(g);
    expect(g.breakerState).toBe('probing');
    expect(await call(g)).toEqual({ failed: 'breaker-open' }); // one probe at a time
    s.calls[2]!.resolve([1]);
    expect(await probe).toEqual([1]);
    expect(g.breakerState).toBe('closed');
    expect(breaker).toEqual(['open', 'closed']);
  });

  it('a failed probe opens the breaker for another cool-down', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client, 10);
    s.setReady(false);
    await call(g);
    await call(g);
    expect(g.breakerState).toBe('open');
    s.setReady(true);
    await clock.advance(250);
    const probe = call(g);
    await clock.advance(100); // the probe times out
    expect(await probe).toEqual({ failed: 'timeout' });
    expect(g.breakerState).toBe('open');
    expect(g.breakerWaitMs()).toBe(250);
  });
});
