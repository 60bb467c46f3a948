import { describe, expect, it } from 'vitest';
import { boundedOptions, type ReferenceOptions } from './reference-options.js';

const reference: ReferenceOptions = {
  mode: 'bounded',
  framework: 'node',
  connections: 10,
  serviceMs: 30,
  work: 'db',
  clientRatePerSec: 150,
  clientBurst: 15,
};

describe('boundedOptions', () => {
  it('watches the event loop when the work is CPU, which no slot count sees', () => {
    expect(boundedOptions({ ...reference, work: 'cpu' }).eventLoop).toBe(true);
    expect(boundedOptions(reference).eventLoop).toBeUndefined();
  });
});
