// A route's quota on its own, on the virtual clock: several policies decided together, window
// policies as buckets, numbers per client (asked once per key, kept, asked again), `skip` and
// `allow`, stores asked after the memory policies, and what each verdict says for the fields.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  memoryRateStore,
  SpillwayConfigError,
  type RateDecision,
  type RateStore,
} from '../index.js';
import { createVirtualClock } from '../testing/index.js';
import { quotaSpec, type QuotaOptions } from './quota-options.js';
import { RouteQuota, type QuotaVerdict, type RateLimitHeaders } from './route-quota.js';

const req = (address = '192.0.2.1', headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress: address }, headers }) as unknown as IncomingMessage;

function quota(options: QuotaOptions, headers: RateLimitHeaders = 'always') {
  const clock = createVirtualClock();
  const q = new RouteQuota(quotaSpec(options, 'api', 'api.quota'), {
    route: 'api',
    clock,
    headers,
  });
  const decide = (key = 'k', r = req()) => q.decide(key, r) as QuotaVerdict;
  return { q, clock, decide };
}

/** A store counting what it is asked, over the real memory store. */
function counted(store: RateStore) {
  const asked: string[] = [];
  const counting: RateStore = {
    take: (key, n, policy) => {
      asked.push(`${policy.name}:${key}`);
      return store.take(key, n, policy);
    },
  };
  return { store: counting, asked };
}

describe('several policies', () => {
  const perSecondAndWindow: QuotaOptions = [
    { name: 'second', ratePerSec: 2, burst: 2 },
    { name: 'minute', perWindow: 3, windowMs: 60_000 },
  ];

  it('admit only when every policy admits, naming the one that refused', () => {
    const { decide, clock } = quota(perSecondAndWindow);
    expect(decide().ok).toBe(true);
    expect(decide().ok).toBe(true);
    const third = decide();
    // The per-second bucket is empty (1 of 3 left a minute): it binds, 500 ms away.
    expect(third).toMatchObject({ ok: false, retryAfterMs: 500, violated: ['second'] });
    expect(third.policy).toBe('"second";q=2;w=1, "minute";q=3;w=60');
    expect(third.now).toBe('"second";r=0;t=1, "minute";r=1;t=40');
    clock.advanceSync(500);
    expect(decide()).toMatchObject({ ok: true, now: '"second";r=0;t=1, "minute";r=0;t=60' });
    clock.advanceSync(1_000);
    // Now the minute binds: its next token is 20 s away (one every 60 s / 3).
    expect(decide()).toMatchObject({ ok: false, violated: ['minute'] });
  });

  it('a refused request takes nothing from the policies that admitted it', () => {
    const { decide, clock } = quota(perSecondAndWindow);
    decide();
    decide();
    // Ten refusals by the per-second policy leave the minute's one token where it was.
    for (let i = 0; i < 10; i++) expect(decide().ok).toBe(false);
    clock.advanceSync(500);
    expect(decide().ok).toBe(true);
  });

  it('Retry-After is the longest wait among the policies that refused', () => {
    const { decide } = quota([
      { name: 'a', ratePerSec: 1, burst: 1 },
      { name: 'b', ratePerSec: 0.25, burst: 1 },
      { name: 'c', ratePerSec: 100, burst: 10 },
    ]);
    decide();
    expect(decide()).toMatchObject({ ok: false, retryAfterMs: 4_000, violated: ['a', 'b'] });
  });

  it('a window policy is a bucket of perWindow refilled evenly over the window', () => {
    const { decide, clock } = quota({ perWindow: 4, windowMs: 10_000 });
    for (let i = 0; i < 4; i++) expect(decide().ok).toBe(true);
    expect(decide()).toMatchObject({ ok: false, retryAfterMs: 2_500 });
    // Not all back at the end of a window: one every 2.5 s.
    clock.advanceSync(2_500);
    expect(decide().ok).toBe(true);
    expect(decide().ok).toBe(false);
    expect(decide().policy).toBe('"api";q=4;w=10');
  });

  it('one policy answers with the same fields as before there were several', () => {
    const { decide } = quota({ ratePerSec: 1, burst: 7, name: 'api' });
    for (let i = 0; i < 7; i++) decide();
    expect(decide()).toMatchObject({
      ok: false,
      retryAfterMs: 1_000,
      policy: '"api";q=7;w=7',
      now: '"api";r=0;t=7',
      violated: ['api'],
    });
  });

  it('keeps one array of violated names per set of refusing policies', () => {
    const { decide } = quota(perSecondAndWindow);
    decide();
    decide();
    expect(decide().violated).toBe(decide().violated);
  });
});

describe('the RateLimit fields a verdict carries', () => {
  it("'always' formats them on admission; 'refusals-only' on refusals; false never", () => {
    const always = quota({ ratePerSec: 1, burst: 2 }).decide;
    expect(always()).toMatchObject({ policy: '"api";q=2;w=2', now: '"api";r=1;t=1' });
    const refusals = quota({ ratePerSec: 1, burst: 1 }, 'refusals-only').decide;
    expect(refusals()).toMatchObject({ ok: true, policy: undefined, now: undefined });
    expect(refusals()).toMatchObject({ ok: false, policy: '"api";q=1;w=1' });
    const never = quota({ ratePerSec: 1, burst: 1 }, false).decide;
    never();
    // No fields, but the refusal still names its policy for the problem body.
    expect(never()).toMatchObject({ ok: false, policy: undefined, violated: ['api'] });
  });
});

describe('numbers per client', () => {
  it('asks a function once per key, and again after refreshLimitsMs', () => {
    const asked: string[] = [];
    const plan: Record<string, number> = { free: 1, pro: 3 };
    const tierOf = (r: IncomingMessage) => r.headers['x-plan'] as string;
    const { decide, clock } = quota({
      ratePerSec: 1,
      burst: ({ key, req: r }) => {
        asked.push(key);
        return plan[tierOf(r)]!;
      },
      refreshLimitsMs: 10_000,
    });
    const free = req('192.0.2.1', { 'x-plan': 'free' });
    const pro = req('192.0.2.2', { 'x-plan': 'pro' });
    expect(decide('f', free).ok).toBe(true);
    expect(decide('f', free).ok).toBe(false);
    for (let i = 0; i < 3; i++) expect(decide('p', pro).ok).toBe(true);
    expect(asked).toEqual(['f', 'p']);
    // A plan change is seen once the numbers are due again.
    plan['free'] = 5;
    clock.advanceSync(10_000);
    const after = decide('f', free);
    expect(after).toMatchObject({ ok: true, policy: '"api";q=5;w=5' });
    expect(asked).toEqual(['f', 'p', 'f']);
  });

  it('clients on the same plan share one set of numbers and fields', () => {
    const { decide } = quota({ ratePerSec: () => 2, burst: () => 4 });
    expect(decide('a').policy).toBe(decide('b').policy);
  });

  it('refreshLimitsMs 0 asks on every request; a smaller plan caps what is left', () => {
    let burst = 5;
    const { decide } = quota({ ratePerSec: 1, burst: () => burst, refreshLimitsMs: 0 });
    decide();
    burst = 2;
    expect(decide()).toMatchObject({ ok: true, now: '"api";r=1;t=1' });
  });

  it('forgets the numbers of a key evicted by maxKeys, and asks again', () => {
    let calls = 0;
    const { decide } = quota({ ratePerSec: 1, burst: () => (calls++, 3), maxKeys: 2 });
    for (const key of ['a', 'b', 'a', 'c', 'a']) decide(key);
    expect(calls).toBe(3);
    decide('b');
    expect(calls).toBe(4);
  });

  it('a function that gives a bad number throws, naming the option and the value', () => {
    const { decide } = quota([
      { name: 'a', ratePerSec: 1, burst: 1 },
      { name: 'b', perWindow: () => 2.5, windowMs: 1_000 },
    ]);
    expect(() => decide()).toThrow(SpillwayConfigError);
    expect(() => decide()).toThrow(/api\.quota\[1\]\.perWindow.*what its function gave.*2\.5/);
  });
});

describe('skip and allow', () => {
  it('skip(req) bypasses the quota without asking it', () => {
    const store = counted(memoryRateStore());
    const { q } = quota({
      ratePerSec: 1,
      burst: 1,
      store: store.store,
      skip: (r) => r.headers['x-internal'] === '1',
    });
    expect(q.bypass(req('192.0.2.1', { 'x-internal': '1' }), () => 'k', false)).toBe(true);
    expect(q.bypass(req(), () => 'k', false)).toBe(false);
    expect(store.asked).toEqual([]);
  });

  it('allow: keys, IPv4 and IPv6 ranges, and IPv4-mapped addresses as IPv4', () => {
    const { q } = quota({
      ratePerSec: 1,
      burst: 1,
      allow: ['partner-7', '10.0.0.0/8', '2001:db8:1::/48', '::ffff:172.16.0.0/108', '192.0.2.9'],
    });
    const allowed = (address: string, key = 'someone') => q.bypass(req(address), () => key, false);
    expect(allowed('203.0.113.5', 'partner-7')).toBe(true);
    expect(allowed('10.200.3.4')).toBe(true);
    expect(allowed('11.0.0.1')).toBe(false);
    expect(allowed('2001:db8:1:ffff::1')).toBe(true);
    expect(allowed('2001:db8:2::1')).toBe(false);
    expect(allowed('::ffff:10.1.1.1')).toBe(true); // the socket's IPv4-mapped form
    expect(allowed('172.31.255.255')).toBe(true);
    expect(allowed('172.32.0.0')).toBe(false);
    expect(allowed('192.0.2.9')).toBe(true);
    expect(allowed('192.0.2.10')).toBe(false);
  });

  it('allow reads the forwarded address under trustProxy, never one a client wrote alone', () => {
    const { q } = quota({ ratePerSec: 1, burst: 1, allow: ['10.0.0.0/8'] });
    const viaProxy = req('192.0.2.50', { 'x-forwarded-for': '10.1.2.3' });
    expect(q.bypass(viaProxy, () => 'k', 1)).toBe(true);
    expect(q.bypass(viaProxy, () => 'k', false)).toBe(false);
  });
});

describe('stores', () => {
  it('asks a store only after the memory policies admitted', () => {
    const shared = counted(memoryRateStore());
    const { decide } = quota([
      { name: 'local', ratePerSec: 1, burst: 1 },
      { name: 'shared', ratePerSec: 1, burst: 10, store: shared.store },
    ]);
    expect(decide().ok).toBe(true);
    expect(decide()).toMatchObject({ ok: false, violated: ['local'] });
    expect(shared.asked).toEqual(['shared:k']);
  });

  it('a store that refuses gives the memory policies their token back', () => {
    const shared = counted(memoryRateStore());
    const { decide } = quota([
      { name: 'local', ratePerSec: 1, burst: 3 },
      { name: 'shared', ratePerSec: 1, burst: 1, store: shared.store },
    ]);
    expect(decide().ok).toBe(true);
    const refused = decide();
    expect(refused).toMatchObject({ ok: false, violated: ['shared'], retryAfterMs: 1_000 });
    // The local bucket shows 2 left, as if the refused request had not come.
    expect(refused.now).toBe('"local";r=2;t=1, "shared";r=0;t=1');
  });

  it('a store that admitted a refused request gets its token back through adjust', () => {
    const shared = memoryRateStore();
    const { decide } = quota([
      { name: 'roomy', ratePerSec: 1, burst: 5, store: shared },
      { name: 'tight', ratePerSec: 1, burst: 1, store: shared },
    ]);
    expect(decide().ok).toBe(true);
    for (let i = 0; i < 3; i++) {
      expect(decide()).toMatchObject({ ok: false, violated: ['tight'] });
    }
    // 'roomy' paid for the first request only: 4 left.
    expect(shared.peek('k', { name: 'roomy', ratePerSec: 1, burst: 5 }).remaining).toBe(4);
    expect(decide().now).toBe('"roomy";r=4;t=1, "tight";r=0;t=1');
  });

  it('a store without adjust keeps the token it took for a refused request: the bound', () => {
    const inner = memoryRateStore();
    const takeOnly: RateStore = { take: (key, n, policy) => inner.take(key, n, policy) };
    const { decide } = quota([
      { name: 'roomy', ratePerSec: 1, burst: 5, store: takeOnly },
      { name: 'tight', ratePerSec: 1, burst: 1, store: inner },
    ]);
    decide();
    decide();
    decide();
    // One token per refused request: 5 − 1 admitted − 2 refused.
    expect(inner.peek('k', { name: 'roomy', ratePerSec: 1, burst: 5 }).remaining).toBe(2);
  });

  it('answers as the store does when it is down with policy closed: not a quota refusal', async () => {
    const down: RateStore = {
      take: (_key, _n, policy) =>
        Promise.resolve<RateDecision>({
          ok: false,
          remaining: 0,
          retryAfterMs: 1_000,
          limit: policy.burst,
          resetMs: 0,
          degraded: true,
          reason: 'store-unavailable',
        }),
    };
    const { q } = quota([
      { name: 'local', ratePerSec: 1, burst: 2 },
      { name: 'shared', ratePerSec: 1, burst: 1, store: down },
    ]);
    const v = await q.decide('k', req());
    expect(v).toMatchObject({ ok: false, reason: 'store-unavailable', degraded: true });
    expect(v.violated).toEqual([]);
    // And the local token came back: two more requests reach the store.
    expect(await q.decide('k', req())).toMatchObject({ reason: 'store-unavailable' });
    expect(await q.decide('k', req())).toMatchObject({ reason: 'store-unavailable' });
  });

  it('a store that throws gives the memory tokens back, and the error goes to the caller', () => {
    const broken: RateStore = {
      take: () => {
        throw new Error('store bug');
      },
    };
    const { decide } = quota([
      { name: 'local', ratePerSec: 1, burst: 1 },
      { name: 'shared', ratePerSec: 1, burst: 1, store: broken },
    ]);
    expect(() => decide()).toThrow('store bug');
    expect(() => decide()).toThrow('store bug'); // not refused by `local`: its token came back
  });
});

describe('options', () => {
  const bad: [unknown, RegExp][] = [
    [5, /`api\.quota`/],
    [[], /`api\.quota`.*from 1 to 8 policies/],
    [
      [
        { ratePerSec: 1, burst: 1 },
        { name: 'b', ratePerSec: 1, burst: 1 },
      ],
      /`api\.quota\[0\]\.name`/,
    ],
    [
      [
        { name: 'a', ratePerSec: 1, burst: 1 },
        { name: 'a', perWindow: 1, windowMs: 1 },
      ],
      /`api\.quota\[1\]\.name`.*unique/,
    ],
    [{ ratePerSec: 1, burst: 1, perWindow: 3 }, /`api\.quota`.*not both/],
    [{ ratePerSec: 0, burst: 1 }, /`api\.quota\.ratePerSec`.*greater than 0.*got 0/],
    [{ ratePerSec: 1, burst: 1.5 }, /`api\.quota\.burst`.*whole number.*1\.5/],
    [{ perWindow: 10, windowMs: 0.5 }, /`api\.quota\.windowMs`/],
    [{ policies: 'x' }, /`api\.quota\.policies`/],
    [{ policies: [{ ratePerSec: 1, burst: 1 }], burst: 5 }, /`api\.quota\.burst`.*inside one of/],
    [{ policies: [{ ratePerSec: 1, burst: 1 }], maxKeys: 0 }, /`api\.quota\.maxKeys`/],
    [{ ratePerSec: 1, burst: 1, skip: true }, /`api\.quota\.skip`/],
    [{ ratePerSec: 1, burst: 1, allow: '10.0.0.0/8' }, /`api\.quota\.allow`/],
    [{ ratePerSec: 1, burst: 1, allow: ['10.0.0/8'] }, /`api\.quota\.allow\[0\]`.*CIDR/],
    [{ ratePerSec: 1, burst: 1, allow: ['10.0.0.0/33'] }, /`api\.quota\.allow\[0\]`/],
    [{ ratePerSec: 1, burst: 1, allow: ['2001:db8::/129'] }, /`api\.quota\.allow\[0\]`/],
    [{ ratePerSec: 1, burst: 1, allow: [''] }, /`api\.quota\.allow\[0\]`/],
    [{ ratePerSec: 1, burst: 1, refreshLimitsMs: -1 }, /`api\.quota\.refreshLimitsMs`/],
    [{ ratePerSec: 1, burst: 1, store: {} }, /`api\.quota\.store`/],
  ];
  it.each(bad)('%j fails at construction, naming the option', (value, message) => {
    expect(() => quota(value as QuotaOptions)).toThrow(SpillwayConfigError);
    expect(() => quota(value as QuotaOptions)).toThrow(message);
  });

  it('a key that looks like a path is a key, not a range', () => {
    const { q } = quota({ ratePerSec: 1, burst: 1, allow: ['tenant/42', 'user:7'] });
    expect(q.bypass(req(), () => 'tenant/42', false)).toBe(true);
    expect(q.bypass(req(), () => 'user:7', false)).toBe(true);
  });
});
