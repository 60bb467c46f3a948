/**
 * Before a way is measured, a second of messages just under the consumer's capacity, through
 * the same producer, gate and consumer, so the first measured second is not spent compiling
 * them (the demo warms its servers up the same way); then a wait until the consumer has
 * finished them, so no way starts with a backlog.
 *
 * @module
 */
import type { LagGate } from '../../../core/lag-gate/lag-gate.js';
import type { BrokerLine } from './broker-port.js';
import { pause } from './lag-sampler.js';
import type { Publishes } from './publishes.js';
import { runSchedule } from './schedule.js';
import { capacityPerSec } from './settings.js';

/** How long the warm-up offers messages, in ms. */
const warmupMs = 1_000;
/** Its rate: just under the consumer's capacity. */
const warmupPerSec = Math.floor(0.9 * capacityPerSec);
/** The longest wait for its messages to be finished, in ms. */
const maxSettleMs = 10_000;

/** A warm-up message's body: the consumer works on it and records nothing. */
export const isWarmup = (body: string): boolean => body.startsWith('w');

export async function warmUp(o: {
  readonly line: BrokerLine;
  readonly publishes: Publishes;
  readonly gate: LagGate | undefined;
  /** Called for each message published. */
  readonly admitted: () => void;
  readonly signal: AbortSignal;
}): Promise<void> {
  const { line, publishes, gate, signal } = o;
  await runSchedule({
    ratePerSec: warmupPerSec,
    durationMs: warmupMs,
    originMs: performance.now(),
    signal,
    offer(seq) {
      if (gate !== undefined && !gate.tryAdmit().ok) return;
      if (!publishes.hasRoom) return;
      o.admitted();
      publishes.track(line.publish(`w${seq}`), () => undefined);
    },
  });
  await publishes.drain(maxSettleMs);
  const until = performance.now() + maxSettleMs;
  while (!signal.aborted && performance.now() < until) {
    const r = await Promise.resolve(line.readLag({ signal })).catch(() => undefined);
    if (r?.messages === 0) return;
    await pause(50, signal);
  }
}
