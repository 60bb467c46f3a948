import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BacklogFullError } from '../errors/backlog-full-error.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { WaitLineFullError } from '../errors/wait-line-full-error.js';
import { createVirtualClock, type VirtualClock } from '../../testing/virtual-clock.js';
import { lagGate, type LagGateOptions, type LagReading } from './lag-gate.js';

/** A source whose backlog the test sets, answering synchronously, counting its reads. */
function syncSource(messages: number, oldestAgeMs?: number) {
  const s = {
    messages,
    oldestAgeMs,
    reads: 0,
    read: (): LagReading => {
      s.reads++;
      return { messages: s.messages, oldestAgeMs: s.oldestAgeMs };
    },
  };
  return s;
}

/** A source that answers after `delayMs` on the clock (or never, for `Infinity`). */
function slowSource(clock: VirtualClock, delayMs: number, messages = 0) {
  const s = {
    messages,
    reads: 0,
    signals: [] as AbortSignal[],
    read: ({ signal }: { signal: AbortSignal }): Promise<LagReading> => {
      s.reads++;
      s.signals.push(signal);
      return new Promise((resolve) => {
        if (Number.isFinite(delayMs)) {
          clock.setTimer(delayMs, () => resolve({ messages: s.messages }));
        }
      });
    },
  };
  return s;
}

function gateOn(
  clock: VirtualClock,
  options: Partial<LagGateOptions> & Pick<LagGateOptions, 'readLag'>,
) {
  return lagGate({ maxLag: 10, pollMs: 100, staleAfterMs: 1_000, clock, ...options });
}

describe('lagGate', () => {
  it('refuses bad options at construction, naming the option', () => {
    const readLag = () => ({ messages: 0 });
    expect(() => lagGate({ readLag, maxLag: 0 })).toThrow(/`maxLag`.*got 0/);
    expect(() => lagGate({ readLag, maxLag: 1, pollMs: -1 })).toThrow(/`pollMs`/);
    expect(() => lagGate({ readLag, maxLag: 1, pollMs: 500, staleAfterMs: 100 })).toThrow(
      /`staleAfterMs` to be at least pollMs \(500\), got 100/,
    );
    expect(() => lagGate({ readLag, maxLag: 1, onStale: 'maybe' as 'open' })).toThrow(/`onStale`/);
    expect(() => lagGate({ readLag, maxLag: 1, maxAgeMs: 0 })).toThrow(/`maxAgeMs`/);
    expect(() => lagGate({ readLag: 3 as never, maxLag: 1 })).toThrow(SpillwayConfigError);
  });

  it('counts what it admitted since the reading: never past maxLag between readings', () => {
    const clock = createVirtualClock();
    const source = syncSource(4);
    const gate = gateOn(clock, { readLag: source.read });
    for (let i = 0; i < 6; i++) expect(gate.tryAdmit()).toEqual({ ok: true });
    expect(gate.lag).toBe(10);
    const r = gate.tryAdmit();
    expect(r).toMatchObject({ ok: false, signal: 'later', reason: 'lag' });
    expect(source.reads).toBe(1);
    expect(gate.tryAdmit(3).ok).toBe(false);
    expect(() => gate.tryAdmit(11)).toThrow(/`n` to be an integer from 1 to maxLag \(10\)/);
  });

  it('reads at most once per pollMs, and the next reading replaces the count', async () => {
    const clock = createVirtualClock();
    const source = syncSource(10);
    const gate = gateOn(clock, { readLag: source.read });
    for (let i = 0; i < 50; i++) gate.tryAdmit();
    expect(source.reads).toBe(1);
    await clock.advance(99);
    gate.tryAdmit();
    expect(source.reads).toBe(1);
    source.messages = 0;
    await clock.advance(1);
    expect(gate.tryAdmit()).toEqual({ ok: true });
    expect(source.reads).toBe(2);
    expect(gate.lag).toBe(1);
  });

  it('keeps one read in flight and refuses with no-reading until the first one answers', async () => {
    const clock = createVirtualClock();
    const source = slowSource(clock, 30, 0);
    const gate = gateOn(clock, { readLag: source.read });
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'no-reading' });
    await clock.advance(200);
    expect(source.reads).toBe(1);
    expect(gate.tryAdmit()).toEqual({ ok: true });
    expect(source.reads).toBe(2);
    expect(gate.tryAdmit()).toEqual({ ok: true });
    expect(source.reads).toBe(2);
  });

  it('estimates the wait from the drain rate measured between readings', async () => {
    const clock = createVirtualClock();
    const source = syncSource(100);
    const gate = gateOn(clock, { readLag: source.read, maxLag: 100 });
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'lag', retryAfterMs: 100 });
    // The consumer drains 10 per 100 ms: 0.1 per ms.
    for (let i = 1; i <= 3; i++) {
      await clock.advance(100);
      source.messages = 100 - 10 * i;
      gate.tryAdmit(40);
    }
    expect(gate.drainPerSec).toBeCloseTo(100, 5);
    // 70 counted at the reading that started now; 20 over for 50 more: 200 ms at 0.1 per ms.
    expect(gate.tryAdmit(50)).toMatchObject({ ok: false, reason: 'lag', retryAfterMs: 200 });
    // Never sooner than the next reading, which alone can change the count.
    expect(gate.tryAdmit(31)).toMatchObject({ ok: false, reason: 'lag', retryAfterMs: 100 });
  });

  it('an empty backlog does not lower the measured rate (the consumer was idle)', async () => {
    const clock = createVirtualClock();
    const source = syncSource(50);
    const gate = gateOn(clock, { readLag: source.read, maxLag: 100 });
    gate.tryAdmit(1);
    await clock.advance(100);
    source.messages = 30;
    gate.tryAdmit(1);
    const rate = gate.drainPerSec;
    await clock.advance(100);
    source.messages = 0;
    gate.tryAdmit(1);
    await clock.advance(1_000);
    source.messages = 0;
    gate.tryAdmit(1);
    expect(gate.drainPerSec).toBeGreaterThanOrEqual(rate!);
  });

  it('refuses while the oldest message is older than maxAgeMs', async () => {
    const clock = createVirtualClock();
    const source = syncSource(1, 600);
    const gate = gateOn(clock, { readLag: source.read, maxAgeMs: 500 });
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'age', retryAfterMs: 100 });
    source.oldestAgeMs = 400;
    await clock.advance(100);
    expect(gate.tryAdmit()).toEqual({ ok: true });
  });

  it('a failing source keeps the last reading until staleAfterMs, then follows onStale', async () => {
    for (const onStale of ['open', 'closed'] as const) {
      const clock = createVirtualClock();
      let fail = false;
      const readLag = (): LagReading => {
        if (fail) throw new Error('broker down');
        return { messages: 0 };
      };
      const gate = gateOn(clock, { readLag, onStale });
      expect(gate.tryAdmit().ok).toBe(true);
      fail = true;
      await clock.advance(1_000);
      expect(gate.tryAdmit().ok).toBe(true);
      expect((gate.lastError as Error).message).toBe('broker down');
      await clock.advance(1);
      const r = gate.tryAdmit();
      if (onStale === 'open') expect(r).toEqual({ ok: true });
      else expect(r).toMatchObject({ ok: false, reason: 'stale', signal: 'later' });
    }
  });

  it('abandons a read that hangs for staleAfterMs: its signal aborts and the next read starts', async () => {
    const clock = createVirtualClock();
    const source = slowSource(clock, Infinity);
    const gate = gateOn(clock, { readLag: source.read });
    gate.tryAdmit();
    await clock.advance(999);
    gate.tryAdmit();
    expect(source.reads).toBe(1);
    await clock.advance(1);
    expect(source.signals[0]!.aborted).toBe(true);
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'no-reading' });
    expect(source.reads).toBe(2);
    await clock.advance(1);
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'stale' });
    expect(clock.pendingTimers).toBe(1);
  });

  it('a malformed reading is a failed read', () => {
    const clock = createVirtualClock();
    const gate = gateOn(clock, { readLag: () => ({ messages: -1 }) });
    expect(gate.tryAdmit()).toMatchObject({ ok: false, reason: 'no-reading' });
    expect(gate.lastError).toBeInstanceOf(TypeError);
  });
});

describe('lagGate.admit', () => {
  it('waits in line and is admitted, oldest first, when a reading makes room', async () => {
    const clock = createVirtualClock();
    const source = syncSource(10);
    const gate = gateOn(clock, { readLag: source.read });
    const order: number[] = [];
    const a = gate.admit({ n: 2 }).then(() => order.push(1));
    const b = gate.admit().then(() => order.push(2));
    expect(gate.waiting).toBe(2);
    expect(gate.tryAdmit()).toMatchObject({ ok: false }); // no barging past the line
    source.messages = 7;
    await clock.advance(100);
    await Promise.all([a, b]);
    expect(order).toEqual([1, 2]);
    expect(gate.waiting).toBe(0);
    expect(gate.lag).toBe(10);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses at once when the estimated wait is longer than maxWaitMs', async () => {
    const clock = createVirtualClock();
    const gate = gateOn(clock, { readLag: syncSource(10).read });
    const e: unknown = await gate.admit({ maxWaitMs: 50 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BacklogFullError);
    expect(e).toMatchObject({ by: 'gate', signal: 'later', retryAfterMs: 100 });
    expect(gate.waiting).toBe(0);
  });

  it('leaves the line when it has waited maxWaitMs, and when its signal aborts', async () => {
    const clock = createVirtualClock();
    const gate = gateOn(clock, { readLag: syncSource(10).read });
    const timedOut = gate.admit({ maxWaitMs: 250 }).catch((x: unknown) => x);
    const controller = new AbortController();
    const aborted = gate.admit({ signal: controller.signal }).catch((x: unknown) => x);
    await clock.advance(249);
    expect(gate.waiting).toBe(2);
    await clock.advance(1);
    expect(await timedOut).toBeInstanceOf(BacklogFullError);
    controller.abort(new Error('stop'));
    expect(await aborted).toMatchObject({ message: 'stop' });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(gate.waiting).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('bounds its line', async () => {
    const clock = createVirtualClock();
    const gate = gateOn(clock, { readLag: syncSource(10).read, maxWaiting: 1 });
    const first = gate.admit({ maxWaitMs: 1_000 }).catch(() => undefined);
    await expect(gate.admit()).rejects.toBeInstanceOf(WaitLineFullError);
    await clock.advance(1_000);
    await first;
  });

  it('polls the source while callers wait, and admits them when a closed gate gets a reading', async () => {
    const clock = createVirtualClock();
    let up = false;
    let reads = 0;
    const gate = gateOn(clock, {
      readLag: () => {
        reads++;
        if (!up) throw new Error('down');
        return { messages: 0 };
      },
      staleAfterMs: 200,
    });
    const admitted = gate.admit();
    await clock.advance(1_000);
    expect(gate.waiting).toBe(1);
    expect(reads).toBeGreaterThanOrEqual(10);
    up = true;
    await clock.advance(100);
    await admitted;
    expect(clock.pendingTimers).toBe(0);
  });
});
