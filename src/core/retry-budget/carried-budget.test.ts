import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError } from '../errors/overloaded-error.js';
import { QueueFullError } from '../errors/rejected-error.js';
import { budgetCarriedBy, carryBudget } from './carried-budget.js';
import { retryBudget } from './retry-budget.js';

const key = Symbol.for('spillway.retryBudget');
const refusal = (): DependencyOverloadedError =>
  new DependencyOverloadedError('users refused the request (503)', {
    signal: 'later',
    dependency: 'users',
  });

/** What a log line, a JSON body or a spread copy of `error` would show. */
function shown(error: object): string {
  return [
    inspect(error, { depth: 4 }),
    JSON.stringify(error),
    String(Object.getOwnPropertySymbols(error).map(String)),
    JSON.stringify(Object.keys({ ...error })),
  ].join('\n');
}

describe('carryBudget and budgetCarriedBy', () => {
  it("marks Spillway's own errors with nothing of their own to show, and the first mark stands", () => {
    const first = retryBudget();
    const second = retryBudget();
    for (const error of [refusal(), new QueueFullError()]) {
      const before = shown(error);
      carryBudget(error, first);
      expect(budgetCarriedBy(error)).toBe(first);
      // Read under the shared key, as another installed copy reads it.
      expect((error as { [key]?: unknown })[key]).toBe(first);
      expect(Object.hasOwn(error, key)).toBe(false);
      expect(shown(error)).toBe(before);
      carryBudget(error, second);
      expect(budgetCarriedBy(error)).toBe(first);
    }
    expect(budgetCarriedBy(refusal())).toBeUndefined();
  });

  it('marks any other object with a property that never shows, the first mark standing', () => {
    const first = retryBudget();
    for (const error of [new Error('socket hang up'), { status: 503 }]) {
      carryBudget(error, first);
      carryBudget(error, retryBudget());
      expect(budgetCarriedBy(error)).toBe(first);
      expect(Object.keys(error)).toEqual('status' in error ? ['status'] : []);
      expect(JSON.stringify(error)).not.toContain('retryBudget');
      expect(inspect(error)).not.toContain('retryBudget');
    }
  });

  it('leaves alone what cannot take a mark, and reads back only a real budget', () => {
    const budget = retryBudget();
    const frozen = Object.freeze(refusal());
    carryBudget(frozen, budget); // no throw
    expect(budgetCarriedBy(frozen)).toBeUndefined();
    carryBudget(Object.freeze(new Error('frozen')), budget);
    carryBudget('text', budget);
    carryBudget(undefined, budget);
    expect(budgetCarriedBy('text')).toBeUndefined();
    expect(budgetCarriedBy(null)).toBeUndefined();
    expect(budgetCarriedBy({ [key]: { tryRetry: 1 } })).toBeUndefined();
  });

  it('respects the errors of another installed copy: its mark stands, and one is added if none', () => {
    // Another copy's error: the shared brand, but not this copy's classes.
    const brand = Symbol.for('spillway.error');
    const theirMark = retryBudget();
    const marked = Object.create({
      [brand]: true,
      get [key]() {
        return theirMark;
      },
    }) as object;
    carryBudget(marked, retryBudget());
    expect(budgetCarriedBy(marked)).toBe(theirMark);
    const unmarked = Object.create({ [brand]: true }) as object;
    const ours = retryBudget();
    carryBudget(unmarked, ours);
    expect(budgetCarriedBy(unmarked)).toBe(ours);
    expect(Object.keys(unmarked)).toEqual([]);
  });
});
