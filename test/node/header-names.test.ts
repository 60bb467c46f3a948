// `admission` with random `headerNames`, over a real socket: a configuration that is valid works
// (its fields are read in any letter case and refusals carry its signal field), and one that is
// not fails at construction, naming the option — never on the first request that needs it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DependencyOverloadedError, SpillwayConfigError } from '../../src/index.js';
import { dependency } from '../../src/client/index.js';
import { defaultHeaderNames, type HeaderNames } from '../../src/http/index.js';
import { takenHeaderNames } from '../../src/http/header-names.js';
import { admission, type Admission, type RequestContext } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, keepAliveAgent, listen, send } from '../helpers/http.js';

const keys = ['deadline', 'criticality', 'attempt', 'retry'] as const;

/** Names HTTP and Spillway's refusals use already (and node:http's client sends). */
const taken = [...takenHeaderNames];

const tokenChars = "!#$%&'*+.^_`|~-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const token = fc.string({ unit: fc.constantFrom(...tokenChars), minLength: 1, maxLength: 24 });
/** Anything a configuration might hold that is not a usable field name. */
const notAName = fc.oneof(
  fc.constantFrom('', 'bad name', 'a:b', 'x\r\ny', 'é', ' x'),
  fc.constantFrom(...taken).map((n) => n.toUpperCase()),
  fc.integer(),
  fc.constant(null),
  fc.constant({}),
);
/** A value for one key: unset, set to undefined, a name (often one already in use), or junk. */
const value = fc.oneof(
  { weight: 2, arbitrary: fc.constant('omit' as const) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: token },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      ...(Object.values(defaultHeaderNames) as string[]),
      'X-Same',
      '__proto__',
      'constructor',
      'toString',
    ),
  },
  { weight: 1, arbitrary: notAName },
);
const config = fc.tuple(value, value, value, value).map((values) => {
  const names: Record<string, unknown> = {};
  values.forEach((v, i) => {
    if (v !== 'omit') names[keys[i]!] = v;
  });
  return names;
});

/** What the guard should make of `names`: the names in use, or the option it must refuse. */
function model(names: Record<string, unknown>): { names: HeaderNames } | { refused: string } {
  const out: Record<string, string> = { ...defaultHeaderNames };
  const seen = new Set<string>();
  for (const key of keys) {
    const v = names[key];
    if (v !== undefined) {
      if (typeof v !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(v)) {
        return { refused: `headerNames.${key}` };
      }
      if (taken.includes(v.toLowerCase())) return { refused: `headerNames.${key}` };
      out[key] = v.toLowerCase();
    }
    if (seen.has(out[key]!)) return { refused: `headerNames.${key}` };
    seen.add(out[key]!);
  }
  return { names: out as unknown as HeaderNames };
}

/** `name` in a letter case chosen by `bits`. */
function mixedCase(name: string, bits: readonly boolean[]): string {
  return [...name].map((c, i) => (bits[i % bits.length] ? c.toUpperCase() : c)).join('');
}

let guard: Admission | undefined;
let seen: RequestContext | undefined;
let port = 0;
const server = createServer((req: IncomingMessage, res: ServerResponse) =>
  guard!.handle((_req, response, context) => {
    seen = context;
    response.end('ok');
  })(req, res),
);
const agent = keepAliveAgent();
beforeAll(async () => {
  port = await listen(server);
});
afterAll(async () => {
  agent.destroy();
  await close(server);
});

describe('admission with random headerNames', () => {
  it('works with every valid configuration, in any letter case, and refuses the rest at construction', async () => {
    await fc.assert(
      fc.asyncProperty(
        config,
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        async (names, bits) => {
          const expected = model(names);
          const make = () =>
            admission({
              clock: createVirtualClock(),
              penaltyBox: false,
              headerNames: names,
            });
          if ('refused' in expected) {
            let error: unknown;
            try {
              make();
            } catch (e) {
              error = e;
            }
            expect(error).toBeInstanceOf(SpillwayConfigError);
            expect((error as SpillwayConfigError).option).toBe(expected.refused);
            return;
          }
          guard = make();
          expect(guard.headerNames).toEqual(expected.names);
          const n = expected.names;
          seen = undefined;
          const ok = await send(port, {
            agent,
            headers: {
              [mixedCase(n.deadline, bits)]: '750',
              [mixedCase(n.criticality, bits)]: 'sheddable',
              [mixedCase(n.attempt, bits)]: '3',
            },
          });
          expect(ok.status).toBe(200);
          expect(seen).toMatchObject({ criticality: 'sheddable', attempt: 3 });
          expect(seen!.remainingMs()).toBe(750);
          const refused = await send(port, { agent, headers: { [n.deadline]: '0' } });
          expect(refused.status).toBe(503);
          expect(refused.headers[n.retry]).toBe('never');
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('a client and a guard configured with the same mixed-case names', () => {
  it('understand each other: fields sent, read, and the refusal’s signal read back', async () => {
    const names = {
      deadline: 'X-Time-Left',
      criticality: 'X-Priority',
      attempt: 'X-Try',
      retry: 'X-Retry-Advice',
    };
    const clock = createVirtualClock();
    const guard = admission({ clock, penaltyBox: false, headerNames: names });
    let context: RequestContext | undefined;
    const server = createServer(
      guard.handle((req, res, ctx) => {
        context = ctx;
        if (req.url === '/refuse') {
          throw new DependencyOverloadedError('busy', { signal: 'never' });
        }
        res.end('ok');
      }),
    );
    const port2 = await listen(server);
    try {
      const dep = dependency({
        name: 'guarded',
        baseUrl: `http://127.0.0.1:${port2}`,
        headerNames: names,
        clock,
        breaker: false,
        throttle: false,
      });
      const ok = await dep.fetch('/ok', undefined, {
        deadline: 750,
        criticality: 'sheddable-plus',
      });
      expect(await ok.text()).toBe('ok');
      expect(context).toMatchObject({ criticality: 'sheddable-plus', attempt: 1 });
      expect(context!.remainingMs()).toBe(750);
      const refused = await dep.fetch('/refuse').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(DependencyOverloadedError);
      expect((refused as DependencyOverloadedError).signal).toBe('never');
    } finally {
      await close(server);
    }
  });
});
