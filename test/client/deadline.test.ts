// Deadline, criticality and attempt propagation through real services A → B → C.
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import { DeadlineExceededError, deadline as makeDeadline } from '../../src/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { hop, startServer, type Handler, type TestServer } from './servers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  servers.push(s);
  return s;
}

describe('deadline propagation', () => {
  it('the remaining deadline shrinks hop by hop; criticality and attempt travel too', async () => {
    const c = await serve((_req, res) => res.end('from C'));
    const toC = dependency({ name: 'C', baseUrl: c.url });
    const b = await serve(hop(() => toC, { workMs: 40 }));
    const toB = dependency({ name: 'B', baseUrl: b.url });
    const a = await serve(hop(() => toB, { workMs: 40 }));
    const toA = dependency({ name: 'A', baseUrl: a.url });

    const res = await toA.fetch('/', undefined, { deadline: 2_000, criticality: 'sheddable-plus' });
    expect(await res.text()).toBe('from C');
    const at = (s: TestServer) => Number(s.seen[0]!.headers['spillway-deadline']);
    console.log(`deadline seen: A ${at(a)} ms, B ${at(b)} ms, C ${at(c)} ms (user sent 2000 ms)`);
    expect(at(a)).toBeLessThanOrEqual(2_000);
    expect(at(a)).toBeGreaterThan(1_500);
    expect(at(b)).toBeLessThanOrEqual(at(a) - 40);
    expect(at(c)).toBeLessThanOrEqual(at(b) - 40);
    expect(at(c)).toBeGreaterThan(0);
    for (const s of [a, b, c]) {
      expect(s.seen[0]!.headers['spillway-criticality']).toBe('sheddable-plus');
      expect(s.seen[0]!.headers['spillway-attempt']).toBe('1');
    }
  });

  it('sends the shorter of the deadline and timeoutMs, and nothing when neither bounds the call', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const plain = dependency({ name: 's', baseUrl: s.url });
    await (await plain.fetch('/')).text();
    expect(s.seen[0]!.headers['spillway-deadline']).toBeUndefined();
    expect(s.seen[0]!.headers['spillway-criticality']).toBe('critical');
    const bounded = dependency({ name: 's', baseUrl: s.url, timeoutMs: 300 });
    await (await bounded.fetch('/', undefined, { deadline: 5_000 })).text();
    expect(Number(s.seen[1]!.headers['spillway-deadline'])).toBeLessThanOrEqual(300);
    await (await bounded.fetch('/', undefined, { deadline: 100 })).text();
    expect(Number(s.seen[2]!.headers['spillway-deadline'])).toBeLessThanOrEqual(100);
  });

  it('takes a Deadline object (expiresAt on the clock) and merges the caller’s own headers', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const dep = dependency({ name: 's', baseUrl: s.url });
    const d = makeDeadline({ timeoutMs: 800 });
    try {
      await (
        await dep.fetch(
          '/',
          { headers: { 'x-trace': 't1', 'Spillway-Attempt': '99' } },
          { deadline: d },
        )
      ).text();
    } finally {
      d.dispose();
    }
    const h = s.seen[0]!.headers;
    expect(Number(h['spillway-deadline'])).toBeLessThanOrEqual(800);
    expect(h['x-trace']).toBe('t1');
    expect(h['spillway-attempt']).toBe('1'); // ours wins over a stale copy
    const request = new Request(`${s.url}/r`, { headers: { 'x-from-request': 'yes' } });
    await (await dep.fetch(request)).text();
    expect(s.seen[1]!.headers['x-from-request']).toBe('yes');
    expect(s.seen[1]!.headers['spillway-attempt']).toBe('1');
  });

  it('a spent deadline is refused before anything is sent', async () => {
    const s = await serve((_req, res) => res.end('ok'));
    const clock = createVirtualClock({ start: 1_000 });
    const dep = dependency({ name: 's', baseUrl: s.url, clock });
    await expect(dep.fetch('/', undefined, { deadline: 0 })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    await expect(
      dep.fetch('/', undefined, { deadline: { expiresAt: 999 } }),
    ).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(s.seen).toHaveLength(0);
  });

  it('call(fn) hands the same context to any kind of call', async () => {
    const dep = dependency({ name: 'db', timeoutMs: 1_000 });
    const seen = await dep.call((ctx) => ({ headers: ctx.headers, attempt: ctx.attempt }), {
      criticality: 'sheddable',
    });
    expect(seen.attempt).toBe(1);
    expect(seen.headers).toMatchObject({
      'spillway-criticality': 'sheddable',
      'spillway-attempt': '1',
    });
    expect(Number(seen.headers['spillway-deadline'])).toBeLessThanOrEqual(1_000);
  });
});
