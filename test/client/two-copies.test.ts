// Two installed copies of Spillway in one process (the built package and the sources, as two
// packages depending on different versions would load them): a `retry()` of one copy, given no
// budget, spends the budget a dependency of the other copy marked its failure with — in both
// directions. Needs `dist/` built (`npm test` builds it first).
import { describe, expect, it } from 'vitest';
import * as source from '../../src/index.js';
import { dependency as sourceDependency } from '../../src/client/index.js';
import { createVirtualClock } from '../../src/testing/index.js';

// Loaded by address, so that linting and type checks need no build: typed as the sources are.
const dist = (path: string): Promise<unknown> =>
  import(new URL(`../../dist/${path}`, import.meta.url).href);
const built = (await dist('index.js')) as typeof source;
const { dependency: builtDependency } = (await dist('client/index.js')) as {
  dependency: typeof sourceDependency;
};

type Copy = typeof source;
type Dependency = typeof sourceDependency;

/** A dependency of `copy` whose work always fails with that copy's `later` refusal. */
function refusing(copy: Copy, dependency: Dependency, budget: source.RetryBudget) {
  let calls = 0;
  const dep = dependency({ name: 'users', retry: false, budget });
  const call = (): Promise<unknown> =>
    dep.call(() => {
      calls++;
      return Promise.reject(
        new copy.DependencyOverloadedError('users refused the request (503)', {
          signal: 'later',
          dependency: 'users',
        }),
      );
    });
  return { call, calls: () => calls };
}

const pairs = [
  { name: 'built marks, source retries', marks: built, dep: builtDependency, loop: source },
  { name: 'source marks, built retries', marks: source, dep: sourceDependency, loop: built },
] as const;

describe('a retry of one installed copy around a dependency of another', () => {
  for (const p of pairs) {
    it(`${p.name}: spends the dependency's budget, and stops when it is spent`, async () => {
      // Two tokens: the first failure brings the budget to half, where no retry is allowed.
      const spent = refusing(p.marks, p.dep, p.marks.retryBudget({ maxTokens: 2 }));
      const refused = await p.loop.retry(spent.call, { idempotent: true }).catch((e: unknown) => e);
      expect(spent.calls()).toBe(1);
      expect((refused as { code?: unknown }).code).toBe('SPILLWAY_E_RETRY_BUDGET');

      // A roomy budget lets the loop retry, the waits on a virtual clock.
      const clock = createVirtualClock();
      const roomy = refusing(p.marks, p.dep, p.marks.retryBudget());
      const run = p.loop
        .retry(roomy.call, { idempotent: true, maxAttempts: 2, clock })
        .catch((e: unknown) => e);
      await clock.runAll();
      const failed = await run;
      expect(roomy.calls()).toBe(2);
      expect((failed as { code?: unknown }).code).toBe('SPILLWAY_E_OVERLOADED');
    });
  }

  it("keeps the first copy's mark when the other copy marks the same error", async () => {
    const dep = builtDependency({ name: 'users', retry: false });
    const error = await dep
      .call(() =>
        Promise.reject(
          new built.DependencyOverloadedError('no', { signal: 'later', dependency: 'users' }),
        ),
      )
      .catch((e: unknown) => e);
    expect(built.budgetCarriedBy(error)).toBe(dep.budget);
    source.carryBudget(error, source.retryBudget());
    expect(source.budgetCarriedBy(error)).toBe(dep.budget);
    expect(built.budgetCarriedBy(error)).toBe(dep.budget);
  });
});
