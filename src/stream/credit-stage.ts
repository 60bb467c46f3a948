/**
 * `creditStage`: a `creditGate` inside a `stream.pipeline`. Items pass through unchanged, each
 * spending one credit, so nothing moves downstream until the receiver has granted room for it
 * with `request(n)` (a remote consumer's window, a worker that asks for more when idle).
 *
 * @module
 */
import type { CreditGate } from '../core/credit-gate/credit-gate.js';
import { SpillwayConfigError } from '../core/errors/config-error.js';
import type { PipelineStage } from './stage.js';

/**
 * A pipeline stage that lets each item through only once it has a credit of `gate`: it takes
 * one at once when the receiver has granted some, and otherwise waits (aborting with the
 * pipeline). When the source ends, or the stage stops for any reason, it completes the gate
 * (the sender will send no more).
 *
 * The receiver cancelling the gate fails the pipeline with the gate's `GateClosedError`
 * (its `cause` is the receiver's reason): output cut short never looks complete. So does a
 * full line of senders (`WaitLineFullError`) or a bad `request(n)` (the gate's error).
 *
 * @example
 * const gate = creditGate({ maxCredit: 64 });
 * socket.on('message', (m) => gate.request(JSON.parse(String(m)).request));
 * await pipeline(Readable.from(events()), creditStage(gate), toFrames, socketStream);
 */
export function creditStage<T>(gate: CreditGate): PipelineStage<T, T> {
  const g = gate as Partial<CreditGate> | null;
  if (
    typeof g !== 'object' ||
    g === null ||
    typeof g.send !== 'function' ||
    typeof g.tryTake !== 'function' ||
    typeof g.complete !== 'function'
  ) {
    throw new SpillwayConfigError('gate', 'a creditGate (with send, tryTake and complete)', gate);
  }
  return async function* creditStaged(source, stage) {
    const signal = stage?.signal;
    try {
      for await (const item of source) {
        if (!gate.tryTake()) await gate.send({ signal });
        yield item;
      }
    } finally {
      gate.complete();
    }
  };
}
