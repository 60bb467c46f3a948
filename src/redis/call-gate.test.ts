// The gate's timing on a virtual clock, over a scripted client whose calls settle only when
// the test says so: the deadline answers at once and exactly on time, travels to take
// scripts as a Redis time, the in-flight cap counts calls until they really settle, and the
// breaker opens, probes only when connected, and closes. The clean-up lane: exempt from the
// cap, queued while the client is not ready and sent once it is, bounded, retried a bounded
// number of times. Batches: the takes made in one tick go as one call (per slot on a
// cluster), each answered with its part of the reply, and never overtake a later plain call.
// (The same behaviour against real Redis faults is in test/redis/.)
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../testing/virtual-clock.js';
import { CallGate, isFailure, type CallFailure } from './call-gate.js';
import { maxAttempts, retryEveryMs } from './cleanup-lane.js';
import type { ScriptClient } from './script-client.js';
import { gcraScript, semReleaseScript, semRenewScript } from './scripts.js';

interface Call {
  readonly name: string;
  /** `run` (EVALSHA, then EVAL on NOSCRIPT) or `runInOrder` (EVAL, sent once). */
  readonly by: 'run' | 'runInOrder';
  readonly keys: string[];
  readonly args: (string | number)[];
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

function scripted(cluster = false) {
  const calls: Call[] = [];
  let ready = true;
  const sent =
    (by: Call['by']): ScriptClient['run'] =>
    (script, keys, args) =>
      new Promise((resolve, reject) => {
        calls.push({ name: script.name, by, keys, args, resolve, reject });
      });
  const client: ScriptClient = {
    run: sent('run'),
    runInOrder: sent('runInOrder'),
    ready: () => ready,
    cluster,
  };
  return {
    client,
    calls,
    setReady: (r: boolean) => {
      ready = r;
    },
  };
}

function gate(client: ScriptClient, maxInFlight = 3, cleanupMaxQueue = 100, maxBatch = 16) {
  const clock = createVirtualClock();
  const failures: string[] = [];
  const breaker: string[] = [];
  const g = new CallGate({
    client,
    clock,
    timeoutMs: 100,
    maxInFlight,
    maxBatch,
    breakerFailures: 2,
    breakerCooldownMs: 250,
    cleanupMaxQueue,
    onFailure: (f) => failures.push(f.failed),
    onBreaker: (s) => breaker.push(s),
  });
  return { g, clock, failures, breaker };
}

const call = (g: CallGate, key = 'k') => g.call(gcraScript, { keys: [key], args: [1, 1, 1, 1] });
/** Lets the takes made so far go: a batch is sent at the end of its tick. */
const tick = () => Promise.resolve();
const release = (g: CallGate, id: string, until = Infinity) =>
  g.cleanup.send(semReleaseScript, { keys: ['z', 'h'], args: [id] }, until);
/** The lease ids of the release calls sent so far (a call may carry several). */
const released = (calls: readonly Call[]) =>
  calls.filter((c) => c.name === semReleaseScript.name).flatMap((c) => c.args);

describe('CallGate', () => {
  it('passes replies through as numbers', async () => {
    const s = scripted();
    const { g } = gate(s.client);
    const p = call(g);
    await tick();
    s.calls[0]!.resolve([1, 2n, 3, 4, 5]);
    expect(await p).toEqual([1, 2, 3, 4]);
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
    await tick();
    // One call for both; each of its items counts as a failure.
    s.calls[0]!.reject(new Error('ECONNRESET'));
    expect(isFailure(await a) && isFailure(await b)).toBe(true);
    expect(g.breakerState).toBe('open');
    expect(breaker).toEqual(['open']);
    expect(await call(g)).toEqual({ failed: 'breaker-open' });
    expect(s.calls.length).toBe(1);
    s.setReady(false);
    await clock.advance(300);
    expect(await call(g)).toEqual({ failed: 'breaker-open' }); // no probe while disconnected
    s.setReady(true);
    const probe = call(g);
    expect(g.breakerState).toBe('probing');
    expect(await call(g)).toEqual({ failed: 'breaker-open' }); // one probe at a time
    await tick();
    s.calls[1]!.resolve([1, 0, -1, 0, 0]);
    expect(await probe).toEqual([1, 0, -1, 0]);
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

  it('sends take scripts the deadline in Redis time once a reply has told it', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    await clock.advance(1_000);
    void call(g);
    await tick();
    expect(s.calls[0]!.args.at(-1)).toBe(''); // nothing known yet
    // Redis's clock reads 5,000,000 ms more than ours; answered at once.
    s.calls[0]!.resolve([1, 0, -1, 0, (clock.now() + 5_000_000) * 1000]);
    await clock.flush();
    void call(g);
    await tick();
    expect(s.calls[1]!.args).toEqual([1, 1, 1, 1, (clock.now() + 100 + 5_000_000) * 1000]);
    // Clean-up scripts are not takes: no expiry.
    release(g, 'a');
    await tick();
    expect(s.calls[2]!.args).toEqual(['a']);
  });

  it('a late reply still tells the time; an expired reply is a failure, not an answer', async () => {
    const s = scripted();
    const { g, clock, failures } = gate(s.client);
    const first = call(g);
    await clock.advance(150);
    expect(await first).toEqual({ failed: 'timeout' });
    s.calls[0]!.resolve([1, 0, -1, 0, 7_000_000]); // Redis said 7 s, answered at 150 ms
    await clock.flush();
    void call(g);
    await tick();
    expect(s.calls[1]!.args.at(-1)).toBe((150 + 100 + 7_000 - 150) * 1000);
    // Redis says it ran the call after its expiry: nothing was done.
    const second = call(g);
    await tick();
    s.calls[2]!.resolve([-1, 7_300_000]);
    expect(await second).toEqual({ failed: 'expired' });
    expect(failures).toEqual(['timeout', 'expired']);
  });
});

describe('CallGate batches', () => {
  it('sends the takes of one tick as one call and answers each with its part', async () => {
    const s = scripted();
    const { g } = gate(s.client, 10);
    const a = call(g, 'a');
    const b = g.call(gcraScript, { keys: ['b'], args: [2, 2, 2, 2] });
    expect(g.inFlight).toBe(2);
    expect(s.calls).toEqual([]);
    await tick();
    expect(s.calls.map((c) => [c.keys, c.args])).toEqual([
      [
        ['a', 'b'],
        [1, 1, 1, 1, 2, 2, 2, 2, ''],
      ],
    ]);
    s.calls[0]!.resolve([1, 0, -1, 10, 0, 0, 20, 30, 99]);
    expect(await a).toEqual([1, 0, -1, 10]);
    expect(await b).toEqual([0, 0, 20, 30]);
    expect(g.inFlight).toBe(0);
    // The next tick is the next call.
    void call(g);
    await tick();
    expect(s.calls.length).toBe(2);
  });

  it('a full batch goes at once, the rest at the end of the tick: maxBatch 3, 7 takes', async () => {
    const s = scripted();
    const { g } = gate(s.client, 10, 100, 3);
    const takes = Array.from({ length: 7 }, (_, i) =>
      g.call(gcraScript, { keys: [`k${i}`], args: [i, i, i, i] }),
    );
    // Two full batches are on their way before the tick ends; the seventh waits for it.
    expect(s.calls.map((c) => c.keys)).toEqual([
      ['k0', 'k1', 'k2'],
      ['k3', 'k4', 'k5'],
    ]);
    await tick();
    expect(s.calls.map((c) => c.keys)).toEqual([['k0', 'k1', 'k2'], ['k3', 'k4', 'k5'], ['k6']]);
    expect(s.calls[2]!.args).toEqual([6, 6, 6, 6, '']);
    // Each call's reply: 4 numbers per item, then Redis's time.
    for (const c of s.calls) {
      c.resolve([...c.keys.flatMap((k) => [1, 0, Number(k.slice(1)), 10]), 99]);
    }
    expect(await Promise.all(takes)).toEqual(Array.from({ length: 7 }, (_, i) => [1, 0, i, 10]));
    expect(g.inFlight).toBe(0);
  });

  it('maxBatch 1 sends each take on its own, at once', () => {
    const s = scripted();
    const { g } = gate(s.client, 10, 100, 1);
    void call(g, 'a');
    void call(g, 'b');
    expect(s.calls.map((c) => c.keys)).toEqual([['a'], ['b']]);
  });

  it('a reply of the wrong length fails every item; a timeout answers every item on time', async () => {
    const s = scripted();
    const { g, failures } = gate(s.client, 10);
    const a = call(g, 'a');
    const b = call(g, 'b');
    await tick();
    s.calls[0]!.resolve([1, 0, -1, 10, 99]);
    expect(isFailure(await a) && isFailure(await b)).toBe(true);
    expect(failures).toEqual(['error', 'error']);
    const t = gate(scripted().client, 10);
    const c = call(t.g, 'c');
    const d = call(t.g, 'd');
    await t.clock.advance(100);
    expect([await c, await d]).toEqual([{ failed: 'timeout' }, { failed: 'timeout' }]);
  });

  it('a plain call made after takes in the same tick goes after them', () => {
    const s = scripted();
    const { g } = gate(s.client, 10);
    void call(g, 'a');
    void g.call(semRenewScript, { keys: ['z', 'h'], args: ['x', 1000] });
    expect(s.calls.map((c) => c.name)).toEqual([gcraScript.name, semRenewScript.name]);
  });

  it('counts each take against maxInFlight', async () => {
    const s = scripted();
    const { g } = gate(s.client, 2);
    void call(g, 'a');
    void call(g, 'b');
    expect(await call(g, 'c')).toEqual({ failed: 'saturated' });
  });

  it('on a cluster, batches only the takes whose keys share a slot', async () => {
    const s = scripted(true);
    const { g } = gate(s.client, 10);
    for (const key of ['p:{a}:x', 'p:{b}:x', 'q:{a}:y']) void call(g, key);
    await tick();
    expect(s.calls.map((c) => c.keys)).toEqual([['p:{a}:x', 'q:{a}:y'], ['p:{b}:x']]);
  });
});

describe('CallGate clean-up lane', () => {
  it('a release goes out at once even when the hot path has reached maxInFlight', async () => {
    const s = scripted();
    const { g } = gate(s.client, 2);
    void call(g);
    void call(g);
    expect(await call(g)).toEqual({ failed: 'saturated' });
    release(g, 'a');
    await tick();
    expect(released(s.calls)).toEqual(['a']);
    expect(g.cleanup.inFlight).toBe(1);
  });

  it('waits while the client is not ready and goes out, in order, once it is', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    s.setReady(false);
    release(g, 'a');
    release(g, 'b');
    await clock.advance(10 * retryEveryMs);
    expect(s.calls).toEqual([]);
    expect(g.cleanup.queued).toBe(2);
    s.setReady(true);
    await clock.advance(retryEveryMs);
    expect(released(s.calls)).toEqual(['a', 'b']);
    expect(g.cleanup.queued).toBe(0);
  });

  it('sends clean-up by EVAL, never re-sent behind later calls; takes by EVALSHA', async () => {
    const s = scripted();
    const { g } = gate(s.client);
    release(g, 'a');
    void call(g);
    await tick();
    expect(s.calls.map((c) => [c.name, c.by])).toEqual([
      [semReleaseScript.name, 'runInOrder'],
      [gcraScript.name, 'run'],
    ]);
  });

  it('a call made once the client is ready again sends the waiting releases first', async () => {
    const s = scripted();
    const { g } = gate(s.client);
    s.setReady(false);
    release(g, 'a');
    release(g, 'b');
    s.setReady(true);
    void call(g); // before the lane's next check: it must not overtake them
    await tick();
    expect(s.calls.map((c) => c.name)).toEqual([semReleaseScript.name, gcraScript.name]);
    expect(released(s.calls)).toEqual(['a', 'b']);
  });

  it('keeps at most cleanupMaxQueue waiting: the oldest is dropped and reported', async () => {
    const s = scripted();
    const { g, clock, failures } = gate(s.client, 3, 2);
    s.setReady(false);
    for (const id of ['a', 'b', 'c']) release(g, id);
    expect(g.cleanup.queued).toBe(2);
    expect(g.cleanup.dropped).toBe(1);
    expect(failures).toEqual(['dropped']);
    s.setReady(true);
    await clock.advance(retryEveryMs);
    expect(released(s.calls)).toEqual(['b', 'c']);
  });

  it('has an in-flight cap of its own: the rest wait until a call settles', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client, 2);
    for (const id of ['a', 'b', 'c']) release(g, id);
    await tick();
    expect(released(s.calls)).toEqual(['a', 'b']); // one call of two, counted as two
    expect(g.cleanup.inFlight).toBe(2);
    expect(g.cleanup.queued).toBe(1);
    s.calls[0]!.resolve([1, 1]);
    await clock.flush();
    expect(released(s.calls)).toEqual(['a', 'b', 'c']);
  });

  it('sends the releases of one tick as one call, in order, and answers each with its part', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client, 21);
    for (let i = 0; i < 20; i++) release(g, `r${i}`);
    expect(s.calls).toEqual([]); // they wait for the end of the tick
    const renewed = g.cleanup.ask(semRenewScript, { keys: ['z', 'h'], args: ['x', 1000] }, 1e9);
    // A call that is not a batch goes now, behind the releases made before it: 16, then 4.
    expect(s.calls.map((c) => [c.name, c.args.length])).toEqual([
      [semReleaseScript.name, 16],
      [semReleaseScript.name, 4],
      [semRenewScript.name, 2],
    ]);
    expect(s.calls[0]!.keys).toHaveLength(32);
    expect(g.cleanup.inFlight).toBe(21);
    // One reply per call, its numbers split among the call's items.
    s.calls[0]!.resolve(Array.from({ length: 16 }, () => 1));
    s.calls[1]!.resolve([1, 1, 1, 1]);
    s.calls[2]!.resolve(1);
    expect(await renewed).toEqual([1]);
    await clock.flush();
    expect(g.cleanup.inFlight).toBe(0);
    // An error fails every item of the call: each is retried on its own terms, again together.
    release(g, 'x');
    release(g, 'y');
    await tick();
    s.calls.at(-1)!.reject(new Error('ERR something'));
    await clock.advance(retryEveryMs);
    expect(s.calls.at(-1)!.args).toEqual(['x', 'y']);
  });

  it('on a cluster, a batch of releases holds one hash slot', async () => {
    const s = scripted(true);
    const { g } = gate(s.client, 20);
    const rel = (key: string, id: string) =>
      g.cleanup.send(semReleaseScript, { keys: [`{${key}}:z`, `{${key}}:h`], args: [id] }, 1e9);
    rel('a', '1');
    rel('a', '2');
    rel('b', '3');
    rel('a', '4');
    await tick();
    // In line order: a run of one slot goes as one call; a change of slot starts the next.
    expect(s.calls.map((c) => c.args)).toEqual([['1', '2'], ['3'], ['4']]);
  });

  it('gives up unsent a call whose lease has expired anyway', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    s.setReady(false);
    release(g, 'a', clock.now() + 50);
    release(g, 'b', clock.now() + 500);
    await clock.advance(100);
    s.setReady(true);
    await clock.advance(retryEveryMs);
    expect(released(s.calls)).toEqual(['b']);
    expect(g.cleanup.queued).toBe(0);
  });

  it('retries a failed call: while connected a bounded number of times, after a lost connection once ready', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    release(g, 'a');
    await tick();
    for (let i = 0; i < maxAttempts; i++) {
      s.calls[i]!.reject(new Error('ERR something'));
      await clock.advance(retryEveryMs);
    }
    expect(released(s.calls)).toEqual(Array(maxAttempts).fill('a'));
    expect(g.cleanup.queued).toBe(0);

    release(g, 'b');
    await tick();
    const sent = s.calls.length;
    for (let i = 0; i < maxAttempts + 2; i++) {
      s.setReady(false); // the connection drops with the call
      s.calls.at(-1)!.reject(new Error('Connection is closed.'));
      await clock.advance(5 * retryEveryMs);
      s.setReady(true);
      await clock.advance(retryEveryMs);
    }
    expect(s.calls.length - sent).toBe(maxAttempts + 2);
    s.calls.at(-1)!.resolve([1]);
    await clock.flush();
    expect(g.cleanup.queued).toBe(0);
  });

  it('ask: the reply when it comes, else not-ready once its use is over, timeout once sent', async () => {
    const s = scripted();
    const { g, clock } = gate(s.client);
    const renew = (until: number) =>
      g.cleanup.ask(semRenewScript, { keys: ['z', 'h'], args: ['a', 1000] }, until);
    s.setReady(false);
    const waiting = renew(clock.now() + 1_000);
    const pointless = renew(clock.now() + 30);
    await clock.advance(200);
    expect(await pointless).toEqual({ failed: 'not-ready' });
    s.setReady(true);
    await clock.advance(retryEveryMs);
    s.calls[0]!.resolve(1);
    expect(await waiting).toEqual([1]);

    const stalled = renew(clock.now() + 1_000);
    await clock.advance(100);
    expect(await stalled).toEqual({ failed: 'timeout' });
    s.setReady(false);
    s.calls[1]!.reject(new Error('Connection is closed.'));
    s.setReady(true);
    await clock.advance(5 * retryEveryMs);
    expect(s.calls.length).toBe(2); // a call its waiter gave up on is not sent again
    expect(g.cleanup.inFlight).toBe(0);
  });
});
