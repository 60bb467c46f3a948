// Request serialisation, fuzzed: for any unicode method, path, headers and body, either the
// generator refuses the options with a SpillwayConfigError naming the option, or the bytes it
// would send parse back — through node:http's strict parser on loopback — to exactly the one
// request intended: same method, target, header lines and body, no extra line, no second
// request. Characters above U+00FF that latin1 would truncate into CR/LF are the classic way in.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpillwayConfigError } from '../../src/core/errors/config-error.js';
import type { LoadOptions } from '../../src/load/index.js';
import { resolveOptions } from '../../src/load/options.js';

interface Received {
  readonly method: string;
  readonly url: string;
  readonly rawHeaders: readonly string[];
  readonly body: Buffer;
}

let server: Server;
let port: number;
let received: Received[] = [];
let parseErrors: string[] = [];

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks),
      });
      // Keep-alive: a second request smuggled into the bytes would be parsed and counted too.
      res.end();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    parseErrors.push(error.code ?? error.message);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Writes `bytes`, half-closes, and waits until the server has answered and closed. */
async function roundTrip(bytes: Buffer): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('data', () => undefined);
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.end(bytes);
  // A guard, not a timing check: a request the parser waits on forever fails the case.
  const guard = setTimeout(() => socket.destroy(new Error('no close within 10 s')), 10_000);
  await once(socket, 'close');
  clearTimeout(guard);
}

/** Methods node:http delivers as plain requests (it refuses methods it does not know). */
const deliverable = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'];
const rfcToken = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Characters that break serialisers: line ends, their latin1 look-alikes, controls, spaces. */
const tricky = fc.constantFrom(
  '\r',
  '\n',
  '\r\n',
  '\u010d',
  '\u010a',
  '\u0100',
  '\u0085',
  '\u2028',
  '\ud800',
  '\0',
  '\x7f',
  ' ',
  '\t',
  ':',
  'é',
  '\u00ff',
  '{client}',
  'a',
  'Z',
  '/',
  '%0D%0A',
  '\r\nx-injected: 1',
  ' HTTP/1.1\r\nHost: evil\r\n\r\nGET /',
);
/** Any unicode at all. */
const anything = fc.string({ unit: 'binary', maxLength: 12 });
/** Printable ASCII and latin1: mostly what a header value may carry. */
const latin1 = fc.string({
  unit: fc.oneof(
    fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)),
  ),
  maxLength: 12,
});
const tokenText = fc.string({
  unit: fc.constantFrom(..."!#$%&'*+-.^_`|~0123456789abcXYZ"),
  minLength: 1,
  maxLength: 8,
});
/** A plausible value with something tricky spliced in. */
const spliced = (plain: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(plain, tricky, plain).map((parts) => parts.join(''));
/** Mostly plausible (so many requests get through to the wire), often hostile, sometimes anything. */
const field = (plain: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 12, arbitrary: plain },
    { weight: 3, arbitrary: spliced(plain) },
    { weight: 1, arbitrary: anything },
  );
const headerName = field(
  fc.oneof(
    fc.constantFrom('x-client', 'X-Client', 'host', 'accept', '__proto__', 'content-type'),
    tokenText,
  ),
);
const headers = fc
  .array(fc.tuple(headerName, field(latin1)), { maxLength: 4 })
  .map((pairs) => Object.fromEntries(pairs));
const visible = fc.string({
  unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 12,
});
const input = fc.record({
  method: field(fc.constantFrom(...deliverable, 'get', 'CONNECT', 'PURGE', 'M-SEARCH')),
  path: field(visible.map((t) => `/${t}`)),
  runHeaders: headers,
  groupHeaders: headers,
  body: fc.option(fc.oneof(anything, latin1), { nil: undefined }),
});

describe('request serialisation (fuzzed)', () => {
  it('refuses the input with a clear error, or sends exactly the one request intended', async () => {
    await fc.assert(
      fc.asyncProperty(input, async ({ method, path, runHeaders, groupHeaders, body }) => {
        const options: LoadOptions = {
          url: `http://127.0.0.1:${port}/`,
          durationMs: 1000,
          method,
          headers: runHeaders,
          ...(body === undefined ? {} : { body }),
          groups: [{ ratePerSec: 1, path, headers: groupHeaders }],
        };
        let request: Buffer;
        let intended: { method: string; path: string; headers: [string, string][] };
        try {
          const resolved = resolveOptions(options);
          request = resolved.groups[0]!.requests[0]!;
          const group = resolved.groups[0]!;
          const lower = new Set(Object.keys(groupHeaders).map((n) => n.toLowerCase()));
          // The first request is client 0's: `{client}` stands for 0.
          const client0 = (t: string): string => t.replaceAll('{client}', '0');
          const merged: [string, string][] = [
            ...Object.entries(runHeaders).filter(([n]) => !lower.has(n.toLowerCase())),
            ...Object.entries(groupHeaders),
          ].map(([n, v]) => [n, client0(v)]);
          intended = { method: group.method, path: client0(group.path), headers: merged };
        } catch (error) {
          expect(error).toBeInstanceOf(SpillwayConfigError);
          const refusal = error as SpillwayConfigError;
          expect(refusal.option).toMatch(
            /^(method|headers(\..+)?|groups\[0\]\.(method|path|headers(\..+)?))$/s,
          );
          expect(refusal.message.startsWith(`Expected \`${refusal.option}\` to be `)).toBe(true);
          // Plain ASCII letters and digits are never refused.
          const plain = /^[A-Za-z0-9]+$/;
          const allPlain =
            plain.test(method) &&
            /^\/[A-Za-z0-9]*$/.test(path) &&
            [runHeaders, groupHeaders].every((h) =>
              Object.entries(h).every(([n, v]) => plain.test(n) && plain.test(v)),
            ) &&
            new Set(
              [...Object.keys(runHeaders), ...Object.keys(groupHeaders)].map((n) =>
                n.toLowerCase(),
              ),
            ).size ===
              Object.keys(runHeaders).length + Object.keys(groupHeaders).length;
          expect(allPlain).toBe(false);
          return;
        }

        // Accepted: the request line holds to the RFC grammar.
        expect(intended.method).toMatch(rfcToken);
        expect(intended.path).toMatch(/^\/[\x21-\x7e]*$/);
        const requestLine = `${intended.method} ${intended.path} HTTP/1.1\r\n`;
        expect(request.subarray(0, requestLine.length).toString('latin1')).toBe(requestLine);
        // node:http knows only its own methods: for a custom token (already checked above), the
        // rest of the bytes go through under GET.
        const sentMethod = deliverable.includes(intended.method) ? intended.method : 'GET';
        const bytes = Buffer.concat([
          Buffer.from(sentMethod, 'latin1'),
          request.subarray(intended.method.length),
        ]);
        received = [];
        parseErrors = [];
        await roundTrip(bytes);
        expect(parseErrors).toEqual([]);
        expect(received).toHaveLength(1);
        const got = received[0]!;
        expect(got.method).toBe(sentMethod);
        expect(got.url).toBe(intended.path);
        const pairs: [string, string][] = [];
        for (let i = 0; i < got.rawHeaders.length; i += 2) {
          pairs.push([got.rawHeaders[i]!, got.rawHeaders[i + 1]!]);
        }
        const expected: [string, string][] = [...intended.headers];
        if (!expected.some(([n]) => n.toLowerCase() === 'host')) {
          expected.push(['Host', `127.0.0.1:${port}`]);
        }
        const bodyBytes = body === undefined ? undefined : Buffer.from(body);
        if (bodyBytes !== undefined || ['POST', 'PUT', 'PATCH'].includes(intended.method)) {
          expected.push(['Content-Length', String(bodyBytes?.byteLength ?? 0)]);
        }
        const sorted = (list: [string, string][]): string[] =>
          list.map(([n, v]) => JSON.stringify([n, v])).sort();
        expect(sorted(pairs)).toEqual(sorted(expected));
        expect(got.body.equals(bodyBytes ?? Buffer.alloc(0))).toBe(true);
      }),
      { numRuns: 500 },
    );
  }, 120_000);
});
