import { describe, expect, it } from 'vitest';
import { DependencyOverloadedError, QueueFullError, RateLimitedError } from '../index.js';
import { defaultHeaderNames } from './header-names.js';
import { refusalFromError } from './refusal-from-error.js';
import { quotaFields } from './rate-limit-fields.js';
import { readyRefusalOf, refusalResponse } from './refusal-response.js';
import { refusalTable, type RefusalReason } from './refusal.js';

function headerMap(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

describe('refusalResponse', () => {
  it('429 for quota with Retry-After (rounded up), RateLimit fields and a problem body', () => {
    const r = refusalResponse({
      reason: 'quota',
      retryAfterMs: 1_200,
      quota: { name: 'per-client', ratePerSec: 150, burst: 15, remaining: 0, resetMs: 100 },
    });
    const h = headerMap(r.headers);
    expect(r.status).toBe(429);
    expect(h['retry-after']).toBe('2');
    expect(h['spillway-retry']).toBe('later');
    // 150/s is 150 a second, whatever the burst (15): a client pacing itself by q/w keeps to it.
    expect(h['ratelimit-policy']).toBe('"per-client";q=150;w=1');
    expect(h['ratelimit']).toBe('"per-client";r=0;t=1');
    expect(h['content-type']).toBe('application/problem+json');
    expect(Number(h['content-length'])).toBe(Buffer.byteLength(r.body));
    expect(JSON.parse(r.body)).toEqual({
      type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
      title: 'Quota exceeded',
      status: 429,
      detail: expect.any(String) as string,
      retryAfterMs: 1_200,
      spillwayRetry: 'later',
      // draft-10: the problem names the policies the request violated.
      'violated-policies': ['per-client'],
    });
  });

  it('several policies: each in both fields, the refusing ones in violated-policies', () => {
    const quota = quotaFields([
      { name: 'per-second', ratePerSec: 10, burst: 10, remaining: 4, resetMs: 600 },
      {
        name: 'hourly',
        ratePerSec: 1_000 / 3_600,
        burst: 1_000,
        remaining: 0,
        resetMs: 7_200,
        violated: true,
      },
    ]);
    const r = refusalResponse({ reason: 'quota', retryAfterMs: 3_600, quota });
    const h = headerMap(r.headers);
    expect(h['ratelimit-policy']).toBe('"per-second";q=10;w=1, "hourly";q=1000;w=3600');
    expect(h['ratelimit']).toBe('"per-second";r=4;t=1, "hourly";r=0;t=8');
    expect(h['retry-after']).toBe('4');
    expect(Number(h['content-length'])).toBe(Buffer.byteLength(r.body));
    expect(JSON.parse(r.body)).toMatchObject({ 'violated-policies': ['hourly'] });
    // Through the one-write path too: the lines carry both fields.
    const ready = readyRefusalOf(r)!;
    expect(ready.tail).toContain('ratelimit: "per-second";r=4;t=1, "hourly";r=0;t=8\r\n');
    expect(ready.tail.endsWith(r.body)).toBe(true);
  });

  it('quota fields given without RateLimit fields still name the violated policy in the body', () => {
    const violated = ['we"ird\u00e9'];
    const r = refusalResponse({
      reason: 'quota',
      retryAfterMs: 1_000,
      quota: { policy: undefined, now: undefined, violated },
    });
    expect(r.headers).not.toContain('ratelimit');
    expect(r.headers).not.toContain('ratelimit-policy');
    // Named as in the fields: printable ASCII only, so the body stays ASCII.
    expect(r.body).toContain(',"violated-policies":["we\\"ird"]}');
    expect(Number(headerMap(r.headers)['content-length'])).toBe(Buffer.byteLength(r.body));
  });

  it("refusals of different reasons interleaved reuse each reason's strings, bytes unchanged", () => {
    const quota = { policy: '"q";q=1;w=1', now: '"q";r=0;t=1', violated: ['q'] };
    const blocked = () => refusalResponse({ reason: 'blocked', retryAfterMs: 60_000 });
    const polite = () => refusalResponse({ reason: 'quota', retryAfterMs: 700, quota });
    const first = [blocked(), polite()];
    const again = [blocked(), polite()];
    for (let i = 0; i < 2; i++) {
      // The same strings, not rebuilt ones: an escalated client's refusal between polite
      // clients' no longer costs the next refusal a rebuild.
      expect(readyRefusalOf(again[i]!)).toBe(readyRefusalOf(first[i]!));
      expect(again[i]!.headers).toEqual(first[i]!.headers);
      expect(again[i]!.body).toBe(first[i]!.body);
    }
    expect(JSON.parse(first[0]!.body)).toMatchObject({ status: 429, retryAfterMs: 60_000 });
    expect(headerMap(first[1]!.headers)['ratelimit']).toBe('"q";r=0;t=1');
  });

  it('fields formatted elsewhere are checked before they go out as ready lines', () => {
    const bad = refusalResponse({
      reason: 'quota',
      retryAfterMs: 1_000,
      quota: { policy: '"a";q=1;w=1', now: '"a";r=0;t=1\r\nx-injected: 1', violated: ['a'] },
    });
    expect(readyRefusalOf(bad)).toBeUndefined();
  });

  it('RateLimit fields follow draft-10 syntax: quoted names, integer q/w and r/t', () => {
    const r = refusalResponse({
      reason: 'quota',
      retryAfterMs: 10,
      quota: {
        name: 'we"ird\\name\u0007',
        ratePerSec: 0.5,
        burst: 3,
        remaining: 0,
        resetMs: 5_999,
      },
    });
    const h = headerMap(r.headers);
    expect(h['ratelimit-policy']).toMatch(/^"(?:[^"\\]|\\.)*";q=\d+;w=\d+$/);
    expect(h['ratelimit-policy']).toBe('"we\\"ird\\\\name";q=3;w=6');
    expect(h['ratelimit']).toMatch(/^"(?:[^"\\]|\\.)*";r=\d+;t=\d+$/);
  });

  it('every reason has a status, a stable type, and Retry-After ≥ 1 only when the signal is later', () => {
    const types = new Set<string>();
    for (const reason of Object.keys(refusalTable) as RefusalReason[]) {
      for (const retryAfterMs of [undefined, 0, 1, 999, 1_001]) {
        const r = refusalResponse({ reason, retryAfterMs });
        const h = headerMap(r.headers);
        if (reason === 'failure') {
          expect([r.status, r.signal, h['spillway-retry']]).toEqual([500, undefined, undefined]);
        } else {
          expect([429, 503]).toContain(r.status);
          expect(['later', 'elsewhere', 'never']).toContain(h['spillway-retry']);
        }
        if (r.signal === 'later') expect(Number(h['retry-after'])).toBeGreaterThanOrEqual(1);
        else expect(h['retry-after']).toBeUndefined();
        const body = JSON.parse(r.body) as { type: string; status: number; title: string };
        expect(body.status).toBe(r.status);
        types.add(body.type);
      }
    }
    expect(types.size).toBe(Object.keys(refusalTable).length);
    expect(refusalResponse({ reason: 'deadline' }).signal).toBe('never');
    expect(refusalResponse({ reason: 'unavailable' }).signal).toBe('elsewhere');
    expect(refusalResponse({ reason: 'capacity', signal: 'elsewhere' }).headers).not.toContain(
      'retry-after',
    );
  });

  it('the 500 for a failure that is not overload: no retry advice, the same bytes as ever', () => {
    const r = refusalResponse({ reason: 'failure', retryAfterMs: 5_000 });
    const body =
      '{"type":"about:blank","title":"Internal Server Error","status":500,' +
      '"detail":"The request failed on the server."}';
    expect(r.status).toBe(500);
    expect(r.signal).toBeUndefined();
    expect(r.body).toBe(body);
    expect(r.headers).toEqual([
      'content-type',
      'application/problem+json',
      'content-length',
      String(body.length),
    ]);
  });

  it('uses configured header names', () => {
    const r = refusalResponse(
      { reason: 'capacity' },
      { deadline: 'x-d', criticality: 'x-c', attempt: 'x-a', retry: 'x-retry' },
    );
    expect(headerMap(r.headers)['x-retry']).toBe('later');
  });

  it('reuses the last strings built only for the same inputs, and never shares a header list', () => {
    const quota = { name: 'q', ratePerSec: 1, burst: 1, remaining: 0, resetMs: 900 };
    const a = refusalResponse({ reason: 'quota', retryAfterMs: 900, quota });
    const b = refusalResponse({ reason: 'quota', retryAfterMs: 900, quota });
    expect(b).toEqual(a);
    expect(b.headers).not.toBe(a.headers);
    a.headers.push('x-shard', 'b');
    expect(b.headers).not.toContain('x-shard');
    // Each input that changes a string changes it: the wait, the quota state, the reason,
    // the signal, the field names, a detail.
    const variants = [
      refusalResponse({ reason: 'quota', retryAfterMs: 901, quota }),
      refusalResponse({ reason: 'quota', retryAfterMs: 900, quota: { ...quota, resetMs: 1_900 } }),
      refusalResponse({ reason: 'penalty', retryAfterMs: 900, quota }),
      refusalResponse({ reason: 'quota', signal: 'elsewhere', quota }),
      refusalResponse(
        { reason: 'quota', retryAfterMs: 900, quota },
        { ...defaultHeaderNames, retry: 'x-retry' },
      ),
      refusalResponse({ reason: 'quota', retryAfterMs: 900, quota, detail: 'Slow down.' }),
    ];
    for (const v of variants) {
      expect(v.headers.join() + v.body).not.toBe(b.headers.join() + b.body);
    }
    expect(refusalResponse({ reason: 'quota', retryAfterMs: 900, quota })).toEqual(b);
  });

  it('states a wait in whole ms, rounded up, and from 10 s up in whole seconds like Retry-After', () => {
    const stated = (retryAfterMs: number | undefined) => {
      const r = refusalResponse({ reason: 'blocked', retryAfterMs });
      const body = JSON.parse(r.body) as { retryAfterMs: number };
      return [body.retryAfterMs, Number(headerMap(r.headers)['retry-after'])];
    };
    expect(stated(undefined)).toEqual([1_000, 1]);
    expect(stated(0)).toEqual([1, 1]);
    expect(stated(Number.NaN)).toEqual([1, 1]);
    expect(stated(1_234.5)).toEqual([1_235, 2]);
    expect(stated(9_999)).toEqual([9_999, 10]);
    expect(stated(9_999.5)).toEqual([10_000, 10]);
    expect(stated(10_001)).toEqual([11_000, 11]);
    expect(stated(59_873.2)).toEqual([60_000, 60]);
    // A client blocked for a minute, refused again and again over a second, gets the same
    // bytes: one set of strings built for the second, not one per ms.
    const a = refusalResponse({ reason: 'blocked', retryAfterMs: 59_999.9 });
    const b = refusalResponse({ reason: 'blocked', retryAfterMs: 59_001 });
    expect(b.body).toBe(a.body);
    expect(readyRefusalOf(b)?.tail).toBe(readyRefusalOf(a)?.tail);
  });
});

describe('refusalFromError (propagation)', () => {
  it('passes a dependency’s signal up, and turns it into never once a layer below retried', () => {
    const once = new DependencyOverloadedError('C is busy', {
      signal: 'later',
      retryAfterMs: 2_000,
    });
    expect(refusalFromError(once)).toEqual({
      reason: 'dependency',
      signal: 'later',
      retryAfterMs: 2_000,
    });
    const retried = new DependencyOverloadedError('C is busy', { signal: 'later', attempts: 3 });
    expect(refusalFromError(retried)?.signal).toBe('never');
    const stop = new DependencyOverloadedError('C said stop', { signal: 'never' });
    expect(refusalFromError(stop)?.signal).toBe('never');
  });

  it('maps local limit refusals, quota errors and plain 429/503 errors; ignores other errors', () => {
    expect(refusalFromError(new QueueFullError({ retryAfterMs: 40 }))).toEqual({
      reason: 'dependency',
      signal: 'later',
      retryAfterMs: 40,
    });
    expect(refusalFromError(new RateLimitedError(500))?.retryAfterMs).toBe(500);
    expect(refusalFromError(Object.assign(new Error('x'), { status: 503 }))?.reason).toBe(
      'dependency',
    );
    expect(refusalFromError({ response: { status: 429 } })?.signal).toBe('later');
    expect(refusalFromError(new Error('boom'))).toBeUndefined();
    expect(refusalFromError(Object.assign(new Error('x'), { status: 500 }))).toBeUndefined();
    expect(refusalFromError('string')).toBeUndefined();
    expect(refusalFromError(null)).toBeUndefined();
    // A thrown value whose fields throw when read is an ordinary failure, never a second throw.
    const hostile = new Proxy(
      {},
      {
        get: () => {
          throw new Error('read me not');
        },
      },
    );
    expect(refusalFromError(hostile)).toBeUndefined();
  });
});
