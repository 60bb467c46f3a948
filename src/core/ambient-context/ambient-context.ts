/**
 * The context work inherits from the request it was started for: the request's deadline, its
 * criticality and which attempt it is, held in an `AsyncLocalStorage` that the guard enters
 * around the handler, so every promise, timer and callback the handler starts sees it, and
 * `spillway/client` sends the remaining deadline and the criticality on to the next hop with no
 * code in the handler. Work started outside any request sees none.
 *
 * Transport-free: it holds numbers, a clock and a signal. The store is one per process, kept
 * under a `Symbol.for` key, so a guard and a client from two installed copies of the package
 * still share it.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { systemClock, type Clock } from '../clock/clock.js';
import { checkedCriticalityRank, type Criticality } from '../criticality/criticality.js';
import { SpillwayArgumentError } from '../errors/argument-error.js';

/** What work started for a request knows about it. */
export interface AmbientContext {
  /** When the request's caller stops caring, on `clock` (ms); `Infinity` when unbounded. */
  readonly expiresAt: number;
  /** The clock `expiresAt` is on. @default systemClock */
  readonly clock?: Clock | undefined;
  /** Aborts when the request's work should stop: its deadline passed, or its client left. */
  readonly signal?: AbortSignal | undefined;
  /** How important the request is. */
  readonly criticality: Criticality;
  /** Which attempt of its caller the request is: 1 for the first. */
  readonly attempt: number;
}

const storeKey = Symbol.for('spillway.ambientContext');
const readersKey = Symbol.for('spillway.ambientContext.readers');

/**
 * What the guard and the client use of the store. Spelled out rather than typed as Node's
 * `AsyncLocalStorage`, so the published declarations name nothing from `node:` and type-check
 * for users without Node's type definitions.
 */
export interface AmbientStore {
  getStore(): AmbientContext | undefined;
  run<R, A extends unknown[]>(store: AmbientContext, fn: (...args: A) => R, ...args: A): R;
  exit<R>(fn: () => R): R;
}

/** The one store of the process (see the module comment). @internal */
export const ambientStore: AmbientStore = ((
  globalThis as { [storeKey]?: AsyncLocalStorage<AmbientContext> }
)[storeKey] ??= new AsyncLocalStorage<AmbientContext>());

/**
 * Whether anything in the process reads the context: guards left at their default enter it only
 * then, because on Node 20 and 22 entering one turns on async hooks, which every promise the
 * process makes afterwards pays for (BENCHMARKS.md, "Ambient context"). Shared like the store.
 */
const readers: { present: boolean } = ((globalThis as { [readersKey]?: { present: boolean } })[
  readersKey
] ??= { present: false });

/** Whether the process has a reader of the ambient context. @internal */
export function ambientHasReader(): boolean {
  return readers.present;
}

/**
 * Records that the process reads the ambient context: `dependency()` calls it (unless its
 * `ambientContext` is `false`), and {@link currentContext} on its first call. @internal
 */
export function declareAmbientReader(): void {
  readers.present = true;
}

/**
 * The context of the request the running code was started for, or `undefined` outside any
 * (and inside a guard or a dependency whose `ambientContext` is `false`).
 *
 * Guards left at their default start entering contexts once the process has a reader: a
 * `dependency()`, or a first call to this function. A request already admitted before then runs
 * outside any; give the guard `ambientContext: true` to enter from its first request.
 *
 * @example
 * const ctx = currentContext();
 * const metadata = { deadlineMs: ctx ? ctx.expiresAt - (ctx.clock ?? systemClock).now() : undefined };
 */
export function currentContext(): AmbientContext | undefined {
  readers.present = true;
  return ambientStore.getStore();
}

/**
 * Runs `fn` inside `context`: what it starts, synchronously or later, sees `context` as
 * {@link currentContext}. For transports Spillway has no guard for (a queue consumer, a custom
 * RPC server): call it around the handler of each unit of work. Throws
 * `SpillwayArgumentError` naming a bad field.
 *
 * @example
 * consumer.on('message', (msg) =>
 *   runInContext({ expiresAt: clock.now() + msg.ttlMs, criticality: 'sheddable', attempt: msg.redeliveries + 1 }, () => handle(msg)),
 * );
 */
export function runInContext<R>(context: AmbientContext, fn: () => R): R {
  checkContext(context);
  if (typeof fn !== 'function') throw new SpillwayArgumentError('fn', 'a function', fn);
  return ambientStore.run(context, fn);
}

/**
 * Runs `fn` outside any request's context: for work a handler starts that must outlive the
 * request (a background refresh), which would otherwise inherit the request's deadline.
 */
export function outsideContext<R>(fn: () => R): R {
  if (typeof fn !== 'function') throw new SpillwayArgumentError('fn', 'a function', fn);
  return ambientStore.exit(fn);
}

/** `expiresAt` of `context` on `clock`: itself when the clocks are one, else converted. */
export function expiresAtOn(context: AmbientContext, clock: Clock): number {
  const own = context.clock ?? systemClock;
  const at = context.expiresAt;
  if (own === clock || at === Infinity) return at;
  return clock.now() + (at - own.now());
}

function checkContext(c: AmbientContext): void {
  if (typeof c !== 'object' || c === null) {
    throw new SpillwayArgumentError('context', 'a context object', c);
  }
  if (typeof c.expiresAt !== 'number' || Number.isNaN(c.expiresAt)) {
    throw new SpillwayArgumentError('expiresAt', 'a time on the clock, or Infinity', c.expiresAt);
  }
  checkedCriticalityRank(c.criticality);
  if (!Number.isSafeInteger(c.attempt) || c.attempt < 1) {
    throw new SpillwayArgumentError('attempt', 'a whole number of 1 or more', c.attempt);
  }
  if (c.signal !== undefined && !(c.signal instanceof AbortSignal)) {
    throw new SpillwayArgumentError('signal', 'an AbortSignal', c.signal);
  }
  const clock = c.clock as { now?: unknown } | undefined;
  if (clock !== undefined && typeof clock?.now !== 'function') {
    throw new SpillwayArgumentError('clock', 'a Clock', c.clock);
  }
}
