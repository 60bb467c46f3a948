import { describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../index.js';
import { defaultHeaderNames, headerNamesOf } from './header-names.js';

/** The option a call's SpillwayConfigError names. */
function refusedOption(names: unknown): string | undefined {
  try {
    headerNamesOf(names as never);
  } catch (error) {
    expect(error).toBeInstanceOf(SpillwayConfigError);
    return (error as SpillwayConfigError).option;
  }
  return undefined;
}

describe('headerNamesOf', () => {
  it('fills in the defaults and lower-cases what it is given', () => {
    expect(headerNamesOf(undefined)).toBe(defaultHeaderNames);
    expect(headerNamesOf({})).toEqual(defaultHeaderNames);
    expect(headerNamesOf({ deadline: 'X-Deadline', retry: 'X-Retry' })).toEqual({
      ...defaultHeaderNames,
      deadline: 'x-deadline',
      retry: 'x-retry',
    });
    // A key set to undefined keeps its default rather than erasing it.
    expect(headerNamesOf({ deadline: undefined } as never)).toEqual(defaultHeaderNames);
    expect(Object.isFrozen(headerNamesOf({ attempt: 'x-try' }))).toBe(true);
  });

  it('refuses what is not an HTTP field name, naming the option and the value', () => {
    expect(() => headerNamesOf({ retry: 'bad name' })).toThrow(
      'Expected `headerNames.retry` to be an HTTP field name (a token), got "bad name" (string)',
    );
    for (const value of ['', 'a:b', 'x\r\ny', 'é', 42, null, {}]) {
      expect(refusedOption({ deadline: value })).toBe('headerNames.deadline');
    }
  });

  it('refuses names HTTP or a refusal already uses, a name used twice, and unknown keys', () => {
    expect(refusedOption({ retry: 'Content-Length' })).toBe('headerNames.retry');
    expect(refusedOption({ deadline: 'retry-after' })).toBe('headerNames.deadline');
    expect(refusedOption({ criticality: 'Host' })).toBe('headerNames.criticality');
    expect(refusedOption({ retry: '__proto__' })).toBe('headerNames.retry');
    expect(refusedOption({ attempt: 'Spillway-Deadline' })).toBe('headerNames.attempt');
    expect(refusedOption({ deadline: 'x-a', criticality: 'X-A' })).toBe('headerNames.criticality');
    expect(refusedOption({ deadLine: 'x-deadline' })).toBe('headerNames.deadLine');
    for (const value of ['x', [], null, 1]) expect(refusedOption(value)).toBe('headerNames');
  });
});
