/**
 * One way of running against one broker: a line of its own, the consumer (slots × a fixed
 * service time, like the demo's simulated database), the producer's schedule at three times the
 * consumer's capacity — through a `lagGate` or not — the broker's lag sampled meanwhile, and at
 * the end what became of every message. The line is deleted whatever happens.
 *
 * @module
 */
import { lagGate, type LagGate } from '../../../core/lag-gate/lag-gate.js';
import { CpuMeter } from '../../../load/cpu-meter.js';
import type { BrokerLine, BrokerPort } from './broker-port.js';
import { BrokerRecorder } from './broker-recorder.js';
import { fixedService } from './fixed-service.js';
import { sampleLag } from './lag-sampler.js';
import { Publishes } from './publishes.js';
import { runSchedule } from './schedule.js';
import { isWarmup, warmUp } from './warm-up.js';
import {
  gatePollMs,
  gateStaleAfterMs,
  maxInFlightPublishes,
  maxLag,
  offeredPerSec,
  permits,
  serviceMs,
  slots,
  ttlMs,
  type BoundMode,
} from './settings.js';

/** What one way of running measured, before it is judged. */
export interface ModeRun {
  readonly mode: BoundMode;
  readonly where: string;
  readonly startedAt: string;
  readonly recorder: BrokerRecorder;
  /** Messages the broker acknowledged. */
  readonly published: number;
  /** Messages the broker dropped (its TTL): skipped over by the consumer. */
  readonly expired: number;
  /** Messages still in the broker at the end. */
  readonly left: number;
  /** The broker's lag once the consumer had stopped (undefined if it could not be read). */
  readonly lagAtEnd: number | undefined;
  /** With the gate: the most publishes awaiting the broker when a reading began. */
  readonly inFlightAtReading: number | undefined;
  /**
   * With the gate: the most messages admitted and not yet processed, at an admission — the
   * bound on the broker's lag the gate keeps, counted here exactly (the broker's own count can
   * only be lower: a message is processed here before its acknowledgement reaches it).
   */
  readonly maxOutstanding: number | undefined;
  /** With the gate: how many readings it made. */
  readonly readings: number | undefined;
  readonly cpuPercent: number;
  readonly machineIdlePercent: number | undefined;
  /** Stopped early (Ctrl-C). */
  readonly aborted: boolean;
}

/** Longest wait for the publishes still awaiting the broker after the schedule, in ms. */
const publishDrainMs = 5_000;

/** Runs `mode` for `durationMs` on a new line named `name`; `lines` holds it while it exists. */
export async function runMode(o: {
  readonly port: BrokerPort;
  readonly mode: BoundMode;
  readonly name: string;
  readonly durationMs: number;
  readonly signal: AbortSignal;
  readonly lines: Set<BrokerLine>;
  readonly log: (line: string) => void;
}): Promise<ModeRun> {
  const line = await o.port.line({ name: o.name, ttlMs: o.mode === 'ttl' ? ttlMs : undefined });
  o.lines.add(line);
  o.log(`  on ${line.where}`);
  try {
    return await measure(o, line);
  } finally {
    await line.delete();
    o.lines.delete(line);
  }
}

/** The consumer's side of a run, which the producer's side reads. */
interface ConsumerSide {
  readonly recorder: BrokerRecorder;
  /** When the measured part started (`performance.now()`); set by the producer. */
  originMs: number;
  /** Messages admitted and not yet processed, and the most at an admission. */
  outstanding: number;
  maxOutstanding: number;
}

async function measure(
  o: { readonly mode: BoundMode; readonly durationMs: number; readonly signal: AbortSignal },
  line: BrokerLine,
): Promise<ModeRun> {
  const side: ConsumerSide = {
    recorder: new BrokerRecorder(o.durationMs),
    originMs: performance.now(),
    outstanding: 0,
    maxOutstanding: 0,
  };
  const rec = side.recorder;
  const work = fixedService({
    slots,
    serviceMs,
    maxWaiting: permits - slots,
    served: (ms) => rec.served(ms),
  });
  const consumer = await line.consume({
    permits,
    async handler(body) {
      if (isWarmup(body)) {
        await work.run();
        side.outstanding--;
        return;
      }
      const [seq, dueMs] = body.split(' ').map(Number) as [number, number];
      rec.delivered(seq);
      await work.run();
      side.outstanding--;
      const atMs = performance.now() - side.originMs;
      rec.processed(atMs, atMs - dueMs);
    },
  });
  let stopped: Promise<void> | undefined;
  const stopConsumer = (): Promise<void> => (stopped ??= consumer.stop());
  try {
    return await produce(o, line, { side, stopConsumer });
  } finally {
    // However the run ended, the consumer stops with it.
    await stopConsumer();
  }
}

/** The producer's side: warm-up, the measured schedule, and the reckoning at the end. */
async function produce(
  o: { readonly mode: BoundMode; readonly durationMs: number; readonly signal: AbortSignal },
  line: BrokerLine,
  c: { readonly side: ConsumerSide; readonly stopConsumer: () => Promise<void> },
): Promise<ModeRun> {
  const { side } = c;
  const rec = side.recorder;
  const admitted = (): void => {
    side.outstanding++;
    if (side.outstanding > side.maxOutstanding) side.maxOutstanding = side.outstanding;
  };
  const publishes = new Publishes(maxInFlightPublishes);
  let inFlightAtReading = 0;
  let readings = 0;
  const gate: LagGate | undefined =
    o.mode === 'lag-gate'
      ? lagGate({
          readLag: (context) => {
            // What the bound allows beyond maxLag: publishes the broker may not have yet.
            inFlightAtReading = Math.max(inFlightAtReading, publishes.inFlight);
            readings++;
            return line.readLag(context);
          },
          maxLag,
          pollMs: gatePollMs,
          staleAfterMs: gateStaleAfterMs,
          onStale: 'closed',
        })
      : undefined;
  await warmUp({ line, publishes, gate, admitted, signal: o.signal });

  const stopSampling = new AbortController();
  const cpu = new CpuMeter();
  side.originMs = performance.now();
  const sampling = sampleLag({
    line,
    recorder: rec,
    elapsedMs: () => performance.now() - side.originMs,
    signal: stopSampling.signal,
  });
  cpu.start();
  try {
    await runSchedule({
      ratePerSec: offeredPerSec,
      durationMs: o.durationMs,
      originMs: side.originMs,
      signal: o.signal,
      offer(seq, dueMs, lateMs) {
        rec.offered(dueMs, lateMs);
        if (gate !== undefined) {
          const r = gate.tryAdmit();
          if (!r.ok) return rec.refusedByGate(dueMs, lateMs, r.retryAfterMs);
        }
        if (!publishes.hasRoom) return rec.notPublished(dueMs, 'dropped', 'in-flight cap');
        rec.admitted(dueMs);
        admitted();
        publishes.track(line.publish(`${seq} ${dueMs}`), (error) => {
          if (error === undefined) rec.confirmed(seq);
          else rec.notPublished(dueMs, 'error', error instanceof Error ? error.name : 'failed');
        });
      },
    });
  } finally {
    cpu.stop(performance.now() - side.originMs);
    // The run ends where its schedule does: the sampler stops, the last publishes land, and
    // the consumer finishes what it holds (counted apart, after the measured part).
    stopSampling.abort();
    await sampling;
  }
  await publishes.drain(publishDrainMs);
  await c.stopConsumer();
  const lagAtEnd = await Promise.resolve(line.readLag({ signal: o.signal })).then(
    (r) => r.messages,
    () => undefined,
  );
  const { published, expired, left } = rec.settle(o.mode === 'ttl' ? ttlMs : undefined);
  return {
    mode: o.mode,
    where: line.where,
    startedAt: cpu.startedAt,
    recorder: rec,
    published,
    expired,
    left,
    lagAtEnd,
    inFlightAtReading: gate === undefined ? undefined : inFlightAtReading,
    maxOutstanding: gate === undefined ? undefined : side.maxOutstanding,
    readings: gate === undefined ? undefined : readings,
    cpuPercent: cpu.percent,
    machineIdlePercent: cpu.machineIdlePercent,
    aborted: o.signal.aborted,
  };
}
