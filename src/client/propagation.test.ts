import { describe, expect, it } from 'vitest';
import { defaultHeaderNames } from '../http/index.js';
import { mergeHeaders, propagationHeaders } from './propagation.js';

describe('propagation', () => {
  it('builds the fields for one attempt; the deadline only when bounded', () => {
    const names = defaultHeaderNames;
    expect(
      propagationHeaders({ names, remainingMs: 1234.9, criticality: 'sheddable', attempt: 2 }),
    ).toEqual({
      'spillway-criticality': 'sheddable',
      'spillway-attempt': '2',
      'spillway-deadline': '1234',
    });
    expect(
      propagationHeaders({ names, remainingMs: -5, criticality: 'critical', attempt: 1 }),
    ).toMatchObject({
      'spillway-deadline': '0',
    });
    expect(
      propagationHeaders({ names, remainingMs: undefined, criticality: 'critical', attempt: 1 }),
    ).not.toHaveProperty('spillway-deadline');
  });

  it('writes the same fields whether the names are the defaults (literal keys) or configured', () => {
    const copy = { ...defaultHeaderNames };
    for (const remainingMs of [undefined, 250]) {
      for (const attempt of [1, 3]) {
        const p = { remainingMs, criticality: 'sheddable-plus', attempt } as const;
        expect(propagationHeaders({ names: defaultHeaderNames, ...p })).toEqual(
          propagationHeaders({ names: copy, ...p }),
        );
      }
    }
    const custom = { ...defaultHeaderNames, attempt: 'x-try', criticality: 'x-prio' };
    expect(
      propagationHeaders({ names: custom, remainingMs: 9, criticality: 'critical', attempt: 2 }),
    ).toEqual({ 'x-prio': 'critical', 'x-try': '2', 'spillway-deadline': '9' });
  });

  it('merges into every shape of headers without mutating them; ours win', () => {
    const extra = { 'spillway-attempt': '1' };
    const plain = { 'X-A': '1', 'Spillway-Attempt': '9' };
    expect(mergeHeaders(plain, extra)).toEqual({ 'X-A': '1', 'spillway-attempt': '1' });
    expect(plain).toEqual({ 'X-A': '1', 'Spillway-Attempt': '9' });
    const h = new Headers({ 'x-a': '1', 'spillway-attempt': '9' });
    const merged = mergeHeaders(h, extra) as Headers;
    expect(merged.get('spillway-attempt')).toBe('1');
    expect(merged.get('x-a')).toBe('1');
    expect(h.get('spillway-attempt')).toBe('9');
    const pairs = mergeHeaders([['x-b', '2']], extra) as Headers;
    expect(pairs.get('x-b')).toBe('2');
    expect(mergeHeaders(undefined, extra)).toEqual(extra);
  });
});
