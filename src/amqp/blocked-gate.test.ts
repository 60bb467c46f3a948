import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { blockedGate } from './blocked-gate.js';

describe('blockedGate', () => {
  it('closes on blocked, reopens on unblocked, and says so', () => {
    const connection = new EventEmitter();
    const gate = blockedGate({ connection, retryAfterMs: 500 });
    const seen: unknown[] = [];
    gate.onChange((e) => seen.push(e));
    expect(gate.tryAdmit()).toEqual({ ok: true });
    connection.emit('blocked', 'low on memory');
    expect(gate.open).toBe(false);
    expect(gate.detail).toBe('low on memory');
    expect(gate.tryAdmit()).toEqual({
      ok: false,
      retryAfterMs: 500,
      signal: 'later',
      reason: 'blocked',
    });
    connection.emit('unblocked');
    expect(gate.tryAdmit()).toEqual({ ok: true });
    expect(seen).toEqual([
      { open: false, detail: 'low on memory' },
      { open: true, detail: undefined },
    ]);
  });

  it('removes its listeners when disposed', () => {
    const connection = new EventEmitter();
    const gate = blockedGate({ connection });
    expect(connection.listenerCount('blocked')).toBe(1);
    gate.dispose();
    gate.dispose();
    expect(connection.listenerCount('blocked') + connection.listenerCount('unblocked')).toBe(0);
    connection.emit('blocked', 'low on disk');
    expect(gate.open).toBe(true);
  });

  it('refuses bad options at construction, naming them', () => {
    expect(() => blockedGate({ connection: {} as never })).toThrow(/`connection`/);
    expect(() => blockedGate({ connection: new EventEmitter(), retryAfterMs: 0 })).toThrow(
      /`retryAfterMs`/,
    );
  });
});
