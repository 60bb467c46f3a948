/**
 * The consumer's work in the broker scenario: like the demo's database, a fixed number of slots
 * each held a fixed time, so its capacity is exactly slots ÷ service time whatever the broker
 * does. Exactly, even on a busy machine: each slot keeps its own schedule, so a job waiting for
 * it starts when the previous one was due to end, not when a late timer said so: Node's timers
 * fire late on a busy machine, and the capacity lost would be the machine's, not the broker's.
 * How late each end was noticed is reported: much later, and the consumer itself was held up.
 *
 * @module
 */

/** Options of {@link fixedService}. */
export interface FixedServiceOptions {
  readonly slots: number;
  readonly serviceMs: number;
  /** Most calls waiting for a slot; one more is refused (throws). */
  readonly maxWaiting: number;
  /** Called once per job with how late its end was noticed, in ms. */
  readonly served: (lateMs: number) => void;
}

/** The work. */
export interface FixedService {
  /** Waits for a slot (in arrival order), holds it `serviceMs`, lets it go. */
  run(): Promise<void>;
  /** Slots held now. */
  readonly busy: number;
}

interface Job {
  readonly arrivedAt: number;
  readonly done: () => void;
}

export function fixedService(o: FixedServiceOptions): FixedService {
  // When each free slot's last job was due to end (performance.now() ms).
  const free: number[] = Array.from({ length: o.slots }, () => 0);
  // FIFO of jobs waiting for a slot, at most maxWaiting long.
  const line: Job[] = [];

  const start = (freeAt: number, job: Job): void => {
    const endAt = Math.max(freeAt, job.arrivedAt) + o.serviceMs;
    setTimeout(
      () => {
        o.served(Math.max(0, performance.now() - endAt));
        job.done();
        const next = line.shift();
        if (next === undefined) free.push(endAt);
        else start(endAt, next);
      },
      Math.max(0, endAt - performance.now()),
    );
  };

  return {
    get busy() {
      return o.slots - free.length;
    },
    run() {
      return new Promise<void>((resolve, reject) => {
        const job = { arrivedAt: performance.now(), done: resolve };
        const freeAt = free.pop();
        if (freeAt !== undefined) start(freeAt, job);
        else if (line.length >= o.maxWaiting)
          reject(new Error('every slot is busy and the line full'));
        else line.push(job);
      });
    },
  };
}
