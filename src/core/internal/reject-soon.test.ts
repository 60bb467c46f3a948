import { describe, expect, it } from 'vitest';
import { rejectSoon } from './reject-soon.js';

describe('rejectSoon', () => {
  it('rejects with the error it was given, one microtask after it was made', async () => {
    const error = new Error('refused');
    let settled = false;
    const p = rejectSoon(error);
    p.catch(() => (settled = true));
    expect(settled).toBe(false);
    await expect(p).rejects.toBe(error);
    expect(settled).toBe(true);
  });

  it('passes on what is not an Error as it is', async () => {
    await expect(rejectSoon({ status: 503 })).rejects.toEqual({ status: 503 });
  });
});
