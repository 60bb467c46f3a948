import { describe, expect, it } from 'vitest';
import { entriesOf } from './redis-stream-consumer.js';

describe('entriesOf', () => {
  const entries = [
    ['1-0', ['body', '0 0']],
    ['1-1', ['body', '1 1']],
  ];

  it('reads a RESP2 reply, [[stream, entries]]', () => {
    expect(entriesOf([['s', entries]])).toEqual([
      ['1-0', '0 0'],
      ['1-1', '1 1'],
    ]);
  });

  it('reads a RESP3 map as ioredis 6 flattens it, [stream, entries]', () => {
    expect(entriesOf(['s', entries])).toEqual([
      ['1-0', '0 0'],
      ['1-1', '1 1'],
    ]);
  });

  it('reads nothing from a read that timed out, or an entry with no fields', () => {
    expect(entriesOf(null)).toEqual([]);
    expect(entriesOf([])).toEqual([]);
    expect(entriesOf([['s', [['1-0', null]]]])).toEqual([]);
  });
});
