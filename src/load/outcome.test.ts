import { describe, expect, it } from 'vitest';
import { outcomeOfStatus } from './outcome.js';

describe('outcomeOfStatus', () => {
  it('2xx is ok, 429 and 503 are rejected, everything else is an error', () => {
    expect([200, 201, 204, 299].map(outcomeOfStatus)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect([429, 503].map(outcomeOfStatus)).toEqual(['rejected', 'rejected']);
    expect([301, 400, 404, 500, 502, 504].map(outcomeOfStatus)).toEqual(new Array(6).fill('error'));
  });
});
