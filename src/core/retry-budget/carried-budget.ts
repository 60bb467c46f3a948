/**
 * The budget an error carries: how a `retry()` given no budget of its own finds the one of the
 * dependency that failed, so an application's retry around a client shares the client's tokens
 * instead of multiplying its attempts. `spillway/client` marks every failure a dependency
 * throws, under overload by the thousand, so the mark is made to cost next to nothing on
 * Spillway's own errors.
 *
 * The mark is read under one `Symbol.for` key, by any installed copy of Spillway, and never
 * shows in logs or JSON. On a Spillway error it is a private field added to the error (the
 * constructor-return idiom below) and read through an accessor on `SpillwayError.prototype`
 * under that key: 20–40 ns, where defining a non-enumerable property on each error costs
 * ~250 ns (a runtime call in V8; a call refused with a fresh error was 4–8 % dearer for it).
 * Any other object (a user's error, another copy's) gets the non-enumerable property.
 *
 * @module
 */
import { isSpillwayError, SpillwayError } from '../errors/spillway-error.js';
import type { RetryBudget } from './contract.js';
import { isRetryBudget } from './retry-budget.js';

const carried = Symbol.for('spillway.retryBudget');

/** Whatever a class's constructor returns is its instance: here, the object it is given. */
class Host {
  constructor(target: object) {
    return target;
  }
}

/**
 * Adds its private field to the object it is constructed on (through {@link Host}), so the
 * error classes themselves declare no private member: a `#field` on them would make every
 * public error type nominal in TypeScript, and another installed copy's errors unassignable.
 */
class BudgetMark extends Host {
  readonly #budget: RetryBudget;

  private constructor(error: object, budget: RetryBudget) {
    super(error);
    this.#budget = budget;
  }

  static add(error: object, budget: RetryBudget): void {
    // Constructed for the field it adds to `error`.
    new BudgetMark(error, budget);
  }

  static of(value: object): RetryBudget | undefined {
    return #budget in value ? value.#budget : undefined;
  }
}

/** Whether `error` is of this copy's classes (its prototype chain; the brand is every copy's). */
function madeHere(error: object): boolean {
  return Object.prototype.isPrototypeOf.call(SpillwayError.prototype, error);
}

// Read by every copy under the shared key: the mark of an error this copy made.
Object.defineProperty(SpillwayError.prototype, carried, {
  get(this: object): RetryBudget | undefined {
    return BudgetMark.of(this);
  },
});

/**
 * Marks `error` as a failure of a dependency whose retries `budget` governs, so that a
 * {@link retry} loop given no budget of its own draws from that one: an application's retry
 * around a client then shares the client's tokens instead of multiplying its attempts. The mark
 * is never enumerable (it does not show in logs or JSON); the first mark stands, and errors
 * that cannot take one (frozen, not objects) are left alone. `spillway/client` marks the errors
 * each dependency throws.
 */
export function carryBudget(error: unknown, budget: RetryBudget): void {
  if (typeof error !== 'object' || error === null || !Object.isExtensible(error)) return;
  if (isSpillwayError(error)) {
    // Read through the accessor of whichever copy made it: a mark by any copy stands.
    if ((error as { [carried]?: unknown })[carried] !== undefined) return;
    if (madeHere(error)) return BudgetMark.add(error, budget);
  } else if (Object.hasOwn(error, carried)) return;
  Object.defineProperty(error, carried, { value: budget, enumerable: false });
}

/** The budget {@link carryBudget} attached to `error`, if any. */
export function budgetCarriedBy(error: unknown): RetryBudget | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const budget = (error as { [carried]?: unknown })[carried];
  return isRetryBudget(budget) ? budget : undefined;
}
