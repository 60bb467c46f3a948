/**
 * The producer's publishes awaiting the broker's acknowledgement: how many there are (what the
 * gate's bound allows beyond `maxLag` is the count at a reading), a cap on them, and a bounded
 * wait for the last ones at the end of a run.
 *
 * @module
 */

export class Publishes {
  readonly #max: number;
  #inFlight = 0;
  #drained: (() => void) | undefined;

  constructor(max: number) {
    this.#max = max;
  }

  /** Publishes awaiting the broker now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Whether one more may start. */
  get hasRoom(): boolean {
    return this.#inFlight < this.#max;
  }

  /** Counts `publish` until it settles, then calls `landed` with its error, if any. */
  track(publish: Promise<void>, landed: (error?: unknown) => void): void {
    this.#inFlight++;
    const settled = (error?: unknown): void => {
      if (--this.#inFlight === 0) this.#drained?.();
      landed(error);
    };
    publish.then(() => settled(), settled);
  }

  /** Resolves when none is awaiting the broker, or after `maxMs`. */
  async drain(maxMs: number): Promise<void> {
    if (this.#inFlight === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (this.#drained = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs))),
    ]);
    clearTimeout(timer);
    this.#drained = undefined;
  }
}
