import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { rejectSoon } from './reject-soon.js';

describe('rejectSoon', () => {
  it('rejects with the error it was given, once a promise that adopts it listens', async () => {
    const error = new Error('refused');
    let settled = false;
    const p = rejectSoon(error);
    p.catch(() => (settled = true));
    expect(settled).toBe(false);
    await expect(p).rejects.toBe(error);
    expect(settled).toBe(true);
    // Returned from a `.then` callback it is adopted (listened to) a microtask after it was
    // made, in a job that calls its `then`: it must still be pending then.
    let pendingWhenAdopted: boolean | undefined;
    const adopted = Promise.resolve().then(() => {
      const q = rejectSoon(error);
      const then = q.then.bind(q);
      // The adopting job calls this `then` (an own property shadows the prototype's).
      void Object.defineProperty(q, 'then', {
        value: (...handlers: Parameters<typeof then>) => {
          pendingWhenAdopted = inspect(q).includes('<pending>');
          return then(...handlers);
        },
      });
      return q;
    });
    await expect(adopted).rejects.toBe(error);
    expect(pendingWhenAdopted).toBe(true);
  });

  it('passes on what is not an Error as it is', async () => {
    await expect(rejectSoon({ status: 503 })).rejects.toEqual({ status: 503 });
  });
});
