import { describe, expect, it } from 'vitest';
import { defaultHeaderNames, refusalResponse } from '../http/index.js';
import { refusalOf } from './response-signal.js';

const context = { names: defaultHeaderNames, wallNow: () => Date.parse('2026-01-01T00:00:00Z') };

function response(
  status: number,
  headers: Record<string, string> = {},
  body: ConstructorParameters<typeof Response>[0] = 'x',
) {
  return new Response(body, { status, headers });
}

describe('refusalOf', () => {
  it('ordinary answers are not refusals, whatever they carry', async () => {
    for (const status of [200, 301, 400, 404, 500, 502]) {
      expect(await refusalOf(response(status, { 'retry-after': '5' }), context)).toBeUndefined();
    }
    expect(await refusalOf(response(200, { 'spillway-retry': 'never' }), context)).toBeUndefined();
  });

  it('429 is later; 503 is elsewhere without Retry-After and later with it', async () => {
    expect(await refusalOf(response(429), context)).toEqual({
      signal: 'later',
      retryAfterMs: undefined,
      explicit: true,
    });
    // A bare 503 says nothing of overload itself: its signal is inferred.
    expect(await refusalOf(response(503), context)).toEqual({
      signal: 'elsewhere',
      retryAfterMs: undefined,
      explicit: false,
    });
    expect(await refusalOf(response(503, { 'retry-after': '3' }), context)).toEqual({
      signal: 'later',
      retryAfterMs: 3_000,
      explicit: true,
    });
    expect(
      await refusalOf(response(503, { 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' }), context),
    ).toEqual({ signal: 'later', retryAfterMs: 10_000, explicit: true });
  });

  it('Spillway-Retry wins, and makes a 5xx a refusal', async () => {
    expect(
      await refusalOf(response(503, { 'spillway-retry': 'never', 'retry-after': '1' }), context),
    ).toEqual({ signal: 'never', retryAfterMs: 1_000, explicit: true });
    expect(await refusalOf(response(500, { 'spillway-retry': 'elsewhere' }), context)).toEqual({
      signal: 'elsewhere',
      retryAfterMs: undefined,
      explicit: true,
    });
  });

  it('reads the problem+json body Spillway servers send', async () => {
    const r = refusalResponse({ reason: 'shed', retryAfterMs: 1_234 });
    const headers = { 'content-type': 'application/problem+json' };
    expect(await refusalOf(response(503, headers, r.body), context)).toEqual({
      signal: 'later',
      retryAfterMs: 1_234,
      explicit: true,
    });
    const never = refusalResponse({ reason: 'deadline' });
    expect(await refusalOf(response(503, headers, never.body), context)).toEqual({
      signal: 'never',
      retryAfterMs: undefined,
      explicit: true,
    });
  });

  it('hostile bodies and values fall back to defaults', async () => {
    const headers = { 'content-type': 'application/problem+json' };
    for (const body of [
      'not json',
      '[]',
      'null',
      '{"spillwayRetry":"sometimes","retryAfterMs":-5}',
      '{"spillwayRetry":7,"retryAfterMs":1e308}',
      '{"retryAfterMs":"10"}',
    ]) {
      expect(await refusalOf(response(503, headers, body), context)).toEqual({
        signal: 'elsewhere',
        retryAfterMs: undefined,
        explicit: false,
      });
    }
    for (const retryAfter of ['-1', 'abc', '1e3', '1, 2', '   ', '9'.repeat(70)]) {
      expect(await refusalOf(response(429, { 'retry-after': retryAfter }), context)).toEqual({
        signal: 'later',
        retryAfterMs: undefined,
        explicit: true,
      });
    }
    expect(await refusalOf(response(429, { 'retry-after': '99999999999' }), context)).toEqual({
      signal: 'later',
      retryAfterMs: 86_400_000,
      explicit: true,
    });
  });

  it('a huge refusal body is not read: it is cancelled', async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(new Uint8Array(4_096));
      },
    });
    const refusal = await refusalOf(
      new Response(endless, {
        status: 503,
        headers: { 'content-type': 'application/problem+json' },
      }),
      context,
    );
    expect(refusal).toEqual({ signal: 'elsewhere', retryAfterMs: undefined, explicit: false });
    expect(pulled).toBeLessThan(10);
    const declared = response(503, { 'content-length': '1000000' }, 'short');
    expect(await refusalOf(declared, context)).toEqual({
      signal: 'elsewhere',
      retryAfterMs: undefined,
      explicit: false,
    });
    expect(declared.bodyUsed).toBe(true);
  });
});
