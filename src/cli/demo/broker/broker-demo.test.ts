import { describe, expect, it } from 'vitest';
import { brokerChoices } from './broker-demo.js';

const given = { broker: undefined, url: undefined, seconds: undefined, quick: false };

describe('brokerChoices', () => {
  it('defaults to NATS on 127.0.0.1 for 20 s, 8 s when quick', () => {
    expect(brokerChoices(given)).toEqual({
      broker: 'nats',
      url: 'nats://127.0.0.1:4222',
      durationMs: 20_000,
    });
    expect(brokerChoices({ ...given, quick: true }).durationMs).toBe(8_000);
    expect(brokerChoices({ ...given, broker: 'amqp' }).url).toBe(
      'amqp://guest:guest@127.0.0.1:5672',
    );
    expect(brokerChoices({ ...given, broker: 'redis', seconds: '4.5' }).durationMs).toBe(4_500);
  });

  it('refuses, naming the option and the value', () => {
    expect(() => brokerChoices({ ...given, broker: 'kafka' })).toThrow(
      "--broker must be one of nats, amqp, redis, got 'kafka'",
    );
    expect(() => brokerChoices({ ...given, broker: 'redis', url: 'nats://x' })).toThrow(
      "--broker-url for redis must look like redis://127.0.0.1:6379, got 'nats://x'",
    );
    for (const seconds of ['3.9', '301', 'soon', '']) {
      expect(() => brokerChoices({ ...given, seconds })).toThrow(
        `--broker-seconds must be a number from 4 to 300, got '${seconds}'`,
      );
    }
  });
});
