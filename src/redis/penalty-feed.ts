/**
 * How a replica of the shared penalty box follows the box's change feed: from the start when
 * it begins, then every `syncMs` from where it left off, a batch at a time, and from the start
 * again when it finds it missed something (Redis lost the box: another epoch; or a tombstone
 * it never read was swept). `sync()` reads now; a read already in flight is followed by one
 * more, since it may have begun before the change the caller waits for.
 *
 * @module
 */
import type { TimerHandle } from '../core/clock/clock.js';
import { isFailure } from './call-gate.js';
import { penaltyFeedScript } from './penalty-scripts.js';
import type { BoxSettings } from './redis-penalty-box-options.js';

/** One change: client, seq, step (-1: gone), ms its wait has left, ms of quiet, suspended. */
export type FeedChange = readonly [string, number, number, number, number, number];

/** What the reader tells its box. */
export interface FeedHost {
  /** A change read from the feed (`now` on the box's clock). */
  apply(now: number, change: FeedChange): void;
  /** Drops everything the replica learned from Redis: it reads the whole box again. */
  forget(): void;
}

/** Changes read per call; one sync reads at most ten times this. */
const feedBatch = 1_000;

/** Follows one box's feed for one replica. */
export class FeedReader {
  readonly #s: BoxSettings;
  readonly #host: FeedHost;
  #since = 0;
  #epoch: number | undefined;
  #reading: Promise<boolean> | undefined;
  #next: Promise<boolean> | undefined;
  #timer: TimerHandle | undefined;
  #closed = false;
  /** True when the last read failed. */
  down = false;

  constructor(settings: BoxSettings, host: FeedHost) {
    this.#s = settings;
    this.#host = host;
    void this.sync();
    this.#arm();
  }

  sync(): Promise<boolean> {
    const running = this.#reading;
    if (running === undefined) return this.#start();
    return (this.#next ??= running.then(() => {
      this.#next = undefined;
      return this.#reading ?? this.#start();
    }));
  }

  close(): void {
    this.#closed = true;
    if (this.#timer !== undefined) this.#s.clock.clearTimer(this.#timer);
    this.#timer = undefined;
  }

  #start(): Promise<boolean> {
    const read: Promise<boolean> = this.#read().finally(() => {
      if (this.#reading === read) this.#reading = undefined;
    });
    this.#reading = read;
    return read;
  }

  async #read(): Promise<boolean> {
    const s = this.#s;
    for (let round = 0; round < 10 && !this.#closed; round++) {
      const since = this.#since;
      const r = await s.store.gate.call(penaltyFeedScript, {
        keys: s.keys,
        args: [since, feedBatch, s.tombMs],
        mixed: true,
      });
      s.store.note(r);
      if (isFailure(r)) {
        this.down = true;
        return false;
      }
      this.down = false;
      const [, seq = 0, swept = 0, epoch = 0] = r;
      const lost = this.#epoch !== undefined && epoch !== this.#epoch;
      this.#epoch = epoch;
      if (lost || (since > 0 && (seq < since || swept > since))) {
        this.#host.forget();
        this.#since = 0;
        continue;
      }
      const now = s.clock.now();
      for (let i = 4; i + 5 < r.length; i += 6) {
        const change = r.slice(i, i + 6) as unknown as FeedChange;
        if (change[1] > this.#since) this.#since = change[1];
        this.#host.apply(now, change);
      }
      if ((r.length - 4) / 6 < feedBatch) return true;
    }
    return !this.#closed;
  }

  #arm(): void {
    this.#timer = this.#s.clock.setTimer(
      this.#s.syncMs,
      () => {
        void this.sync().finally(() => {
          if (!this.#closed) this.#arm();
        });
      },
      { unref: true },
    );
  }
}
