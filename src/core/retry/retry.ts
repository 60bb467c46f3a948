/**
 * A retry loop that keeps the caller's obligations: at most `maxAttempts` (default 3, never
 * more than 5); only work marked idempotent, and only failures that invite a retry (`later`,
 * `elsewhere`, a request that never left); a shared {@link RetryBudget} asked before every
 * retry; full-jitter backoff that honours `Retry-After` and never sleeps past the deadline.
 * When it gives up after retrying, the error says so (`attempts` > 1, or `signal: 'never'`), so
 * no layer above retries the same work again.
 *
 * @module
 */
import type { Clock } from '../clock/clock.js';
import { systemClock } from '../clock/clock.js';
import { SpillwayConfigError } from '../errors/config-error.js';
import { DependencyOverloadedError, type RetrySignal } from '../errors/overloaded-error.js';
import { RetryBudgetExhaustedError } from '../errors/retry-budget-error.js';
import { summaryOf } from '../errors/failure-summary.js';
import { clockLike } from '../internal/validate.js';
import { rejectSoon } from '../internal/reject-soon.js';
import { backoff, isBackoff, type Backoff, type BackoffOptions } from '../backoff/backoff.js';
import { isRetryBudget, type RetryBudget } from '../retry-budget/retry-budget.js';
import { budgetCarriedBy } from '../retry-budget/carried-budget.js';
import { classifyError, type RetryClass } from './classify.js';

/** The hard ceiling on attempts, as in gRPC: more attempts never help an overloaded callee. */
export const maxAttemptsLimit = 5;

/** What each attempt receives. */
export interface RetryContext {
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The caller's signal (a never-aborting one when none was given): pass it to the work. */
  readonly signal: AbortSignal;
}

/** Passed to `onRetry` before each retry's wait. */
export interface RetryEvent {
  /** The attempt about to be made (2 for the first retry). */
  readonly attempt: number;
  readonly delayMs: number;
  /** The failure being retried. */
  readonly error: unknown;
  readonly signal: RetrySignal;
}

/** Options of {@link retry}. */
export interface RetryOptions {
  /** Attempts in all, the first included: 1 to 5. @default 3 */
  readonly maxAttempts?: number;
  /**
   * The budget shared by every layer retrying the same dependency. Without one, a failure that
   * carries its dependency's budget (every `spillway/client` error does; see `carryBudget`)
   * draws from that; any other failure is bounded only by `maxAttempts`.
   */
  readonly budget?: RetryBudget | undefined;
  /** A backoff, or options for the default full-jitter one. @default backoff() */
  readonly backoff?: Backoff | BackoffOptions | undefined;
  /** Aborting stops the loop (and its wait) at once with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Whether the work may safely run twice. Only idempotent work is retried after it may have
   * reached the callee; a request that never left is retried either way. @default false
   */
  readonly idempotent?: boolean | undefined;
  /**
   * When the caller stops caring: an absolute time on `clock`, or anything with `expiresAt`
   * (a `Deadline`). A retry whose wait would reach it is not made.
   */
  readonly deadline?: number | { readonly expiresAt: number } | undefined;
  /** How a failure bears on retrying. @default classifyError */
  readonly classify?: ((error: unknown) => RetryClass | undefined) | undefined;
  /** The dependency's name, for the errors raised when giving up. */
  readonly dependency?: string | undefined;
  /** Called before each retry's wait. */
  readonly onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Where time comes from. @default systemClock */
  readonly clock?: Clock | undefined;
}

const neverAborted = new AbortController().signal;
const noOptions: RetryOptions = Object.freeze({});
let sharedBackoff: Backoff | undefined;

/**
 * Runs `fn`, retrying it while the rules allow. Resolves with the first success; rejects with
 * the failure when it is not to be retried (unchanged when no retry was made), with a
 * `DependencyOverloadedError` carrying `attempts` when retries ran out, or with a
 * `RetryBudgetExhaustedError` (`signal: 'never'`) when the budget said no.
 *
 * @example
 * const budget = retryBudget();
 * const user = await retry(({ signal }) => getUser(id, { signal }), {
 *   budget,
 *   idempotent: true,
 *   deadline: d, // a Deadline, or an absolute time on the clock
 *   signal: d.signal,
 * });
 */
export async function retry<T>(
  fn: (context: RetryContext) => T | PromiseLike<T>,
  options?: RetryOptions,
): Promise<T> {
  if (typeof fn !== 'function') throw new SpillwayConfigError('fn', 'a function', fn);
  const o = options === undefined ? noOptions : checkOptions(options);
  const budget = o.budget;
  const signal = o.signal ?? neverAborted;
  if (signal.aborted) throw signal.reason;
  budget?.recordRequest();
  try {
    const value = await fn({ attempt: 1, signal });
    budget?.recordSuccess();
    return value;
  } catch (error) {
    return retryAfterFailure(fn, error, o);
  }
}

/**
 * The rest of {@link retry}'s loop once the first attempt failed with `error`: retries while
 * the rules allow, or rejects with what the caller should see. For a caller that makes the
 * first attempt itself, so that an attempt that succeeds pays for no retry machinery at all
 * (`dependency()`: no options object, no extra promise). `options` are trusted as checked, and
 * the first attempt's request is already recorded in the budget.
 *
 * The first decision is made before any `async` function is entered: under overload most
 * calls end at it (the budget or the deadline says no), and an `async` function that rejects
 * before its caller listens costs Node's rejection tracking a round trip; the refusal is
 * made late instead (`rejectSoon`), once the caller listens.
 *
 * @internal
 */
export function retryAfterFailure<T>(
  fn: (context: RetryContext) => T | PromiseLike<T>,
  error: unknown,
  options: RetryOptions,
): Promise<T> {
  const delayMs = nextDelay(error, 1, options);
  if (typeof delayMs !== 'number') return rejectSoon(delayMs.error);
  return retries(fn, delayMs, options);
}

/** The loop once a retry is due after `delayMs`: waits, tries, and decides again. */
async function retries<T>(
  fn: (context: RetryContext) => T | PromiseLike<T>,
  firstDelayMs: number,
  options: RetryOptions,
): Promise<T> {
  const signal = options.signal ?? neverAborted;
  let delayMs = firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    if (delayMs > 0) await (options.clock ?? systemClock).sleep(delayMs, signal);
    else if (signal.aborted) throw signal.reason;
    let failure: unknown;
    try {
      const value = await fn({ attempt: attempt + 1, signal });
      options.budget?.recordSuccess();
      return value;
    } catch (e) {
      failure = e;
    }
    const next = nextDelay(failure, attempt + 1, options);
    if (typeof next !== 'number') throw next.error;
    delayMs = next;
  }
}

/** What the caller should see instead of another attempt. */
interface Ending {
  readonly error: unknown;
}

/**
 * After a failed attempt: the wait before the next one, or the {@link Ending} the caller
 * should see. Returned, not thrown: V8 never optimises a function that always leaves by a
 * throw (it tiers up on returns), and under overload this one gives up on almost every call.
 */
function nextDelay(error: unknown, attempt: number, o: RetryOptions): number | Ending {
  const c = (o.classify ?? classifyError)(error);
  if (c === undefined) return { error };
  const budget = o.budget;
  budget?.recordFailure();
  const ending = { error, c, attempts: attempt, o };
  if (!c.retryable || (c.sent && o.idempotent !== true)) return { error: giveUp(ending) };
  const maxAttempts = o.maxAttempts ?? 3;
  if (attempt >= maxAttempts) return { error: giveUp(ending) };
  const signal = o.signal;
  if (signal?.aborted === true) return { error: signal.reason };
  const clock = o.clock ?? systemClock;
  const d = o.deadline;
  const expiresAt = d === undefined ? Infinity : typeof d === 'number' ? d : d.expiresAt;
  const decision = backoffOf(o).next({
    retry: attempt - 1,
    retryAfterMs: c.retryAfterMs,
    remainingMs: expiresAt === Infinity ? undefined : expiresAt - clock.now(),
  });
  if (!decision.ok) {
    return {
      error: giveUp(
        decision.reason === 'deadline'
          ? { ...ending, deadlineReason: 'the wait before a retry would pass the deadline' }
          : ending,
      ),
    };
  }
  // Without a budget of its own, the loop spends the one the failure's dependency carries:
  // that dependency counted the attempt already, so only the withdrawal happens here.
  const spend = budget ?? budgetCarriedBy(error);
  if (spend !== undefined && !spend.tryRetry()) {
    const status = (error as { status?: unknown }).status;
    return {
      error: new RetryBudgetExhaustedError({
        attempts: attempt,
        dependency: o.dependency ?? dependencyOf(error),
        status: typeof status === 'number' ? status : undefined,
        retryAfterMs: c.retryAfterMs,
        cause: error,
      }),
    };
  }
  o.onRetry?.({ attempt: attempt + 1, delayMs: decision.delayMs, error, signal: c.signal });
  return decision.delayMs;
}

function backoffOf(o: RetryOptions): Backoff {
  const b = o.backoff;
  if (b === undefined) return (sharedBackoff ??= backoff());
  return isBackoff(b) ? b : backoff(b);
}

/**
 * The error to throw when not retrying. Unchanged when only one attempt was made and there is
 * nothing to add; otherwise a `DependencyOverloadedError` with the attempt count (and `never`
 * when no retry can fit the deadline), the last failure as `cause`.
 */
function giveUp(ending: {
  readonly error: unknown;
  readonly c: RetryClass;
  readonly attempts: number;
  readonly o: RetryOptions;
  readonly deadlineReason?: string;
}): unknown {
  const { error, c, attempts, o, deadlineReason } = ending;
  if (attempts <= 1 && deadlineReason === undefined) return error;
  const dependency = o.dependency ?? dependencyOf(error);
  const status = (error as { status?: unknown }).status;
  return new DependencyOverloadedError(
    `Gave up on ${dependency ?? 'the dependency'} after ${attempts} attempt(s)` +
      (deadlineReason === undefined ? '' : `: ${deadlineReason}`) +
      `; the last: ${summaryOf(error)}`,
    {
      signal: deadlineReason === undefined ? c.signal : 'never',
      retryAfterMs: c.retryAfterMs,
      dependency,
      attempts,
      status: typeof status === 'number' ? status : undefined,
      cause: error,
    },
  );
}

function dependencyOf(error: unknown): string | undefined {
  const name = (error as { dependency?: unknown } | null)?.dependency;
  return typeof name === 'string' ? name : undefined;
}

function checkOptions(o: RetryOptions): RetryOptions {
  if (typeof o !== 'object' || o === null) {
    throw new SpillwayConfigError('retry options', 'an options object', o);
  }
  const m = o.maxAttempts;
  if (
    m !== undefined &&
    (typeof m !== 'number' || !Number.isInteger(m) || m < 1 || m > maxAttemptsLimit)
  ) {
    throw new SpillwayConfigError('maxAttempts', `an integer from 1 to ${maxAttemptsLimit}`, m);
  }
  if (o.budget !== undefined && !isRetryBudget(o.budget)) {
    throw new SpillwayConfigError('budget', 'a RetryBudget', o.budget);
  }
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) {
    throw new SpillwayConfigError('signal', 'an AbortSignal', o.signal);
  }
  if (o.idempotent !== undefined && typeof o.idempotent !== 'boolean') {
    throw new SpillwayConfigError('idempotent', 'a boolean', o.idempotent);
  }
  const d = o.deadline;
  if (
    d !== undefined &&
    typeof d !== 'number' &&
    (typeof d !== 'object' || d === null || typeof d.expiresAt !== 'number')
  ) {
    throw new SpillwayConfigError('deadline', 'a time on the clock or an object with expiresAt', d);
  }
  if (typeof d === 'number' && Number.isNaN(d)) {
    throw new SpillwayConfigError('deadline', 'a time on the clock or an object with expiresAt', d);
  }
  if (o.classify !== undefined && typeof o.classify !== 'function') {
    throw new SpillwayConfigError('classify', 'a function', o.classify);
  }
  if (o.onRetry !== undefined && typeof o.onRetry !== 'function') {
    throw new SpillwayConfigError('onRetry', 'a function', o.onRetry);
  }
  if (o.backoff !== undefined && (typeof o.backoff !== 'object' || o.backoff === null)) {
    throw new SpillwayConfigError('backoff', 'a Backoff or backoff options', o.backoff);
  }
  if (o.clock !== undefined) clockLike('clock', o.clock);
  return o;
}
