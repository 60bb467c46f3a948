// The slot of a key as Redis Cluster computes it (the values are CLUSTER KEYSLOT of Redis 7.0).
import { describe, expect, it } from 'vitest';
import { crc16, hashSlot } from './hash-slot.js';

describe('hashSlot', () => {
  it('is CRC16/XMODEM', () => {
    expect(crc16(new TextEncoder().encode('123456789'))).toBe(0x31c3);
  });

  it.each([
    ['123456789', 12739],
    ['spillway:{wide:client-1}:gcra', 3433],
    ['a{}b', 13694],
    ['{}{x}', 3257],
    ['x{y}z{w}', 12222],
    ['hé', 5390],
    ['{', 4092],
    ['foo{bar', 15278],
  ])('%s is in slot %i', (key, slot) => {
    expect(hashSlot(key)).toBe(slot);
  });

  it('puts every key of one tag in one slot', () => {
    expect(hashSlot('p:{n:id}:lease:z')).toBe(hashSlot('q:{n:id}:lease:h'));
  });
});
