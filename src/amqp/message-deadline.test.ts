import { describe, expect, it } from 'vitest';
import { expirationMs, messageDeadline, publishedAtMs } from './message-deadline.js';

const wallNow = 1_700_000_000_000;

describe('messageDeadline', () => {
  it('reads AMQP timestamps in seconds and Node timestamps in ms', () => {
    expect(publishedAtMs(1_700_000_000)).toBe(wallNow);
    expect(publishedAtMs(wallNow)).toBe(wallNow);
    expect(publishedAtMs(BigInt(1_700_000_000))).toBe(wallNow);
    expect(publishedAtMs(undefined)).toBeUndefined();
    expect(publishedAtMs('soon')).toBeUndefined();
    expect(publishedAtMs(0)).toBeUndefined();
  });

  it('reads expiration as amqplib gives it (a string of ms)', () => {
    expect(expirationMs('1500')).toBe(1500);
    expect(expirationMs(250)).toBe(250);
    expect(expirationMs('1.5s')).toBeUndefined();
    expect(expirationMs(undefined)).toBeUndefined();
  });

  it('counts maxAgeMs from delivery when the message has no timestamp', () => {
    expect(messageDeadline({ properties: {}, maxAgeMs: 5_000, now: 100, wallNow })).toBe(5_100);
  });

  it('takes the shorter of expiration and maxAgeMs, counted from publication', () => {
    const properties = { expiration: '2000', timestamp: wallNow - 500 };
    expect(messageDeadline({ properties, maxAgeMs: 5_000, now: 100, wallNow })).toBe(1_600);
    expect(messageDeadline({ properties, maxAgeMs: 1_000, now: 100, wallNow })).toBe(600);
  });

  it('gives an old message a deadline already past', () => {
    const properties = { timestamp: (wallNow - 10_000) / 1000 };
    expect(messageDeadline({ properties, maxAgeMs: 5_000, now: 100, wallNow })).toBe(-4_900);
  });

  it('never lengthens a life for a timestamp from the future (clock skew)', () => {
    const properties = { timestamp: wallNow + 60_000 };
    expect(messageDeadline({ properties, maxAgeMs: 5_000, now: 100, wallNow })).toBe(5_100);
  });
});
