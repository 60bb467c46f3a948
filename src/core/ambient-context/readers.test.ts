// currentContext() is a reader of the ambient context: its first call makes guards left at their
// default enter it. In a file of its own, so the process starts with no reader.
import { describe, expect, it } from 'vitest';
import { ambientHasReader, currentContext, runInContext } from './ambient-context.js';

describe('readers of the ambient context', () => {
  it('has none until currentContext() is called, and one from then on', () => {
    runInContext({ expiresAt: Infinity, criticality: 'critical', attempt: 1 }, () => undefined);
    expect(ambientHasReader()).toBe(false);
    expect(currentContext()).toBeUndefined();
    expect(ambientHasReader()).toBe(true);
  });
});
