// The offset to Redis's clock: an expiry sent in Redis time is never later than the local
// deadline while the clocks are steady, a stalled reply changes nothing, and steps of
// Redis's clock either way are mended by the next reply.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedisTime } from './redis-time.js';

/** A reply stamped at Redis time (local `at` + `offsetMs`), for a call sent and answered. */
function reply(
  t: RedisTime,
  offsetMs: number,
  times: { sent: number; at: number; answered: number },
) {
  t.observe(times.sent, times.answered, (times.at + offsetMs) * 1000);
}

describe('RedisTime', () => {
  it('is unknown until the first reply, then maps local time to Redis µs', () => {
    const t = new RedisTime();
    expect(t.known).toBe(false);
    expect(t.toRedisUs(100)).toBe('');
    reply(t, 1_000_000, { sent: 10, at: 10, answered: 10 });
    expect(t.known).toBe(true);
    expect(t.toRedisUs(100)).toBe(1_000_100_000);
  });

  it('never maps a deadline later than the true Redis time, whatever the delays', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e12, max: 1e12, noNaN: true }),
        fc.array(fc.tuple(fc.nat(5_000), fc.nat(5_000), fc.nat(60_000)), { minLength: 1 }),
        (offset, calls) => {
          const t = new RedisTime();
          let now = 0;
          for (const [before, after, gap] of calls) {
            now += gap;
            // Redis runs the script `before` ms after the send and answers `after` ms later.
            reply(t, offset, { sent: now, at: now + before, answered: now + before + after });
            const deadline = now + 50;
            // Within µs rounding of the true time.
            expect(Number(t.toRedisUs(deadline))).toBeLessThanOrEqual(
              (deadline + offset) * 1000 + 1,
            );
          }
        },
      ),
    );
  });

  it('a stalled reply does not drag the estimate down', () => {
    const t = new RedisTime();
    reply(t, 5_000, { sent: 0, at: 0, answered: 1 });
    reply(t, 5_000, { sent: 10, at: 10, answered: 900 }); // answered after a long stall
    expect(t.toRedisUs(1_000)).toBe(5_999_000);
  });

  it('mends a Redis clock that stepped back with the next reply', () => {
    const t = new RedisTime();
    reply(t, 5_000, { sent: 0, at: 0, answered: 0 });
    reply(t, 3_000, { sent: 10, at: 11, answered: 12 }); // two seconds back
    expect(t.toRedisUs(100)).toBe((100 + 3_000 - 1) * 1000);
  });

  it('mends a Redis clock that stepped forward with the next reply', () => {
    const t = new RedisTime();
    reply(t, 5_000, { sent: 0, at: 0, answered: 0 });
    reply(t, 9_000, { sent: 10, at: 10, answered: 10 });
    expect(t.toRedisUs(100)).toBe(9_100_000);
  });

  it('ignores replies without a usable time', () => {
    const t = new RedisTime();
    t.observe(0, 1, Number.NaN);
    t.observe(5, 1, 1_000);
    expect(t.known).toBe(false);
  });
});
