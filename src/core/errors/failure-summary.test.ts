import { describe, expect, it } from 'vitest';
import { errorCodes } from './codes.js';
import { summaryOf } from './failure-summary.js';
import { DependencyOverloadedError } from './overloaded-error.js';
import { SpillwayError } from './spillway-error.js';

describe('summaryOf', () => {
  it("drops the code suffix of every code of this copy's", () => {
    for (const code of Object.values(errorCodes)) {
      expect(summaryOf(new SpillwayError(code, 'C refused'))).toBe('C refused');
    }
    const e = new DependencyOverloadedError('B refused the request (503)', { signal: 'later' });
    expect(summaryOf(e)).toBe('B refused the request (503)');
  });

  it("drops another copy's suffix by its shape, and leaves other messages alone", () => {
    // Another installed copy, with a code this one does not know.
    const other = new SpillwayError(errorCodes.overloaded, 'x');
    Object.defineProperty(other, 'code', { value: 'SPILLWAY_E_NEWER' });
    Object.defineProperty(other, 'message', {
      value: 'y (SPILLWAY_E_NEWER, see docs/errors.md#spillway_e_newer)',
    });
    expect(summaryOf(other)).toBe('y');
    expect(summaryOf(new Error('plain (SPILLWAY_E_OVERLOADED, see x)'))).toBe(
      'plain (SPILLWAY_E_OVERLOADED, see x)',
    );
    expect(summaryOf('a string')).toBe('a string');
    expect(summaryOf('z'.repeat(400))).toHaveLength(300);
  });

  it('never throws, whatever the value', () => {
    const hostile = new Proxy(new SpillwayError(errorCodes.overloaded, 'x'), {
      get(target, key) {
        if (key === 'message' || key === 'code') throw new Error('no');
        return Reflect.get(target, key) as unknown;
      },
    });
    expect(() => summaryOf(hostile)).not.toThrow();
  });
});
