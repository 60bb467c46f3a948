import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createVirtualClock } from '../../testing/virtual-clock.js';
import { maskPassword, reportRedisHealth } from './redis-client.js';

const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
  code: 'ECONNREFUSED',
});

describe('reportRedisHealth', () => {
  it('says once that Redis is unreachable and what applies, then reminds at most every 30 s', async () => {
    const clock = createVirtualClock();
    const client = new EventEmitter();
    const lines: string[] = [];
    reportRedisHealth(client, {
      url: 'redis://127.0.0.1:1',
      fallback: "policy 'local' applies",
      log: (line) => lines.push(line),
      clock,
    });
    // A reconnect attempt every 250 ms for 65 s: 260 errors.
    for (let i = 0; i < 260; i++) {
      client.emit('error', refused);
      await clock.advance(250);
    }
    expect(lines).toEqual([
      "Redis at redis://127.0.0.1:1 is unreachable (connect ECONNREFUSED 127.0.0.1:1); policy 'local' applies until it answers. Reconnecting in the background.",
      "Redis at redis://127.0.0.1:1 is still unreachable (121 failed attempts in 30 s); policy 'local' applies.",
      "Redis at redis://127.0.0.1:1 is still unreachable (241 failed attempts in 60 s); policy 'local' applies.",
    ]);
    client.emit('ready');
    client.emit('ready');
    expect(lines.slice(3)).toEqual(['Redis at redis://127.0.0.1:1 answers again.']);
    client.emit('error', refused);
    expect(lines).toHaveLength(5);
    expect(lines[4]).toMatch(/is unreachable \(connect ECONNREFUSED/);
  });

  it('is silent while Redis is healthy', () => {
    const client = new EventEmitter();
    const lines: string[] = [];
    reportRedisHealth(client, { url: 'redis://x', fallback: '', log: (l) => lines.push(l) });
    client.emit('ready');
    expect(lines).toEqual([]);
  });
});

describe('maskPassword', () => {
  it('never prints a password from the URL', () => {
    expect(maskPassword('redis://:s3cret@10.0.0.5:6379/2')).toBe('redis://:***@10.0.0.5:6379/2');
    expect(maskPassword('rediss://user:s3cret@host')).toBe('rediss://user:***@host');
    expect(maskPassword('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});
