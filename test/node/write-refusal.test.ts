// How a refusal reaches the wire, over real sockets on port 0 (no services needed): one plain
// socket write carrying head and body where node:http allows it, the ordinary
// `writeHead(status, headers).end(body)` everywhere else, and the same answer either way. Runs on
// every Node the project supports (CI runs the suite on 20, 22 and 24), so a runtime that builds
// its response heads differently shows up here, not in production.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultHeaderNames, refusalResponse, type RefusalResponse } from '../../src/http/index.js';
import { writeRefusal } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** Socket-level writes seen by the server: each `write` call's text, and `writev` calls. */
interface Writes {
  readonly writes: string[];
  writev: number;
}

async function serve(answer: (res: ServerResponse) => void) {
  const seen: Writes = { writes: [], writev: 0 };
  const server = createServer((_req, res) => answer(res));
  server.on('connection', (socket: Socket) => {
    const write = socket.write.bind(socket) as (...a: unknown[]) => boolean;
    socket.write = (chunk: unknown, ...rest: unknown[]) => {
      seen.writes.push(String(chunk));
      return write(chunk, ...rest);
    };
    const internal = socket as unknown as { _writev?: (...a: unknown[]) => void };
    const writev = internal._writev?.bind(socket);
    if (writev !== undefined) {
      internal._writev = (...a: unknown[]) => {
        seen.writev++;
        writev(...a);
      };
    }
  });
  servers.push(server);
  return { port: await listen(server), seen };
}

/** Sends raw bytes on one connection and collects what comes back until `done` says so. */
function raw(port: number, bytes: string, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      if (done(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** One raw answer: status line, fields (lower-cased names, in order, Date left out), body. */
function parse(answer: string) {
  const split = answer.indexOf('\r\n\r\n');
  const [status, ...lines] = answer.slice(0, split).split('\r\n');
  const fields = lines
    .map((l) => {
      const colon = l.indexOf(':');
      return [l.slice(0, colon).toLowerCase(), l.slice(colon + 1).trim()] as const;
    })
    .filter(([name]) => name !== 'date');
  return { status, fields, body: answer.slice(split + 4) };
}

/** The same request answered the ordinary way and through writeRefusal, parsed. */
async function bothWays(response: RefusalResponse, closeConnection = false) {
  const ordinary = await serve((res) => {
    const headers = closeConnection
      ? [...response.headers, 'connection', 'close']
      : response.headers;
    res.writeHead(response.status, headers).end(response.body);
  });
  const fast = await serve((res) => writeRefusal(res, response, closeConnection));
  const request = 'GET /a HTTP/1.1\r\nHost: t\r\n\r\n';
  const done = (t: string) => t.endsWith(response.body);
  return {
    ordinary: parse(await raw(ordinary.port, request, done)),
    fast: parse(await raw(fast.port, request, done)),
    seen: fast.seen,
  };
}

const sortedFields = (fields: readonly (readonly [string, string])[]) =>
  [...fields].sort(([a], [b]) => a.localeCompare(b));

describe('writeRefusal', () => {
  it.each([
    ['capacity', refusalResponse({ reason: 'capacity', retryAfterMs: 1_500 })],
    ['deadline (never, no Retry-After)', refusalResponse({ reason: 'deadline' })],
    [
      'quota (RateLimit fields)',
      refusalResponse({
        reason: 'quota',
        retryAfterMs: 200,
        quota: { name: 'per-client', ratePerSec: 150, burst: 15, remaining: 0, resetMs: 100 },
      }),
    ],
  ])(
    '%s: the same answer as writeHead + end, in one plain socket write',
    async (_name, response) => {
      const { ordinary, fast, seen } = await bothWays(response);
      expect(fast.status).toBe(ordinary.status);
      expect(sortedFields(fast.fields)).toEqual(sortedFields(ordinary.fields));
      expect(fast.body).toBe(ordinary.body);
      expect(fast.body).toBe(response.body);
      expect(seen.writes).toHaveLength(1);
      expect(seen.writes[0]).toMatch(/^HTTP\/1\.1 (429|503) .*\r\n\r\n\{"type":.*\}$/s);
      expect(seen.writev).toBe(0);
    },
  );

  it('with Connection: close, the same answer, and the server closes the connection', async () => {
    const response = refusalResponse({ reason: 'blocked', retryAfterMs: 60_000 });
    const { ordinary, fast, seen } = await bothWays(response, true);
    expect(sortedFields(fast.fields)).toEqual(sortedFields(ordinary.fields));
    expect(fast.fields).toContainEqual(['connection', 'close']);
    expect(seen.writes).toHaveLength(1);
  });

  it('keeps the connection usable: two refusals on one keep-alive connection parse whole', async () => {
    const response = refusalResponse({ reason: 'capacity', retryAfterMs: 1_500 });
    const { port, seen } = await serve((res) => writeRefusal(res, response, false));
    const request = 'GET /a HTTP/1.1\r\nHost: t\r\n\r\n';
    const text = await raw(port, request + request, (t) => t.split(response.body).length === 3);
    const answers = text.split('HTTP/1.1 ').slice(1);
    expect(answers).toHaveLength(2);
    for (const a of answers) expect(parse(`HTTP/1.1 ${a}`).body).toBe(response.body);
    expect(seen.writes).toHaveLength(2);
  });

  it('a HEAD request gets the head and no body', async () => {
    const response = refusalResponse({ reason: 'capacity' });
    const { port } = await serve((res) => writeRefusal(res, response, false));
    // A HEAD answer then a GET answer on one connection: a stray body would corrupt the second.
    const text = await raw(
      port,
      'HEAD /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n',
      (t) => t.endsWith(response.body),
    );
    const parts = text.split('HTTP/1.1 503');
    expect(parts).toHaveLength(3);
    expect(parts[1]).toMatch(/\r\n\r\n$/);
    expect(parts[2]!.split('\r\n\r\n')[1]).toBe(response.body);
  });

  it('a non-ASCII body arrives intact with the right length', async () => {
    const response = refusalResponse({ reason: 'dependency', detail: 'Dépendance « lente » ⏳' });
    expect(response.body).toMatch(/^[\x20-\x7e]*$/); // refusalResponse escapes to ASCII…
    const handBuilt = { ...response, body: '{"detail":"Dépendance ⏳"}' };
    const headers = handBuilt.headers.slice();
    headers[headers.indexOf('content-length') + 1] = String(Buffer.byteLength(handBuilt.body));
    const { port, seen } = await serve((res) =>
      writeRefusal(res, { ...handBuilt, headers }, false),
    );
    const a = await send(port);
    expect(a.json()).toEqual({ detail: 'Dépendance ⏳' }); // …and a hand-built one still works
    expect(seen.writes.join('')).toContain(handBuilt.body);
    const escaped = await serve((res) => writeRefusal(res, response, false));
    expect((await send(escaped.port)).json()).toMatchObject({
      detail: 'Dépendance « lente » ⏳',
    });
  });

  it('fields set before it stay, and a field of its own replaces an earlier one', async () => {
    const response = refusalResponse({ reason: 'capacity', retryAfterMs: 2_000 });
    const apart = await serve((res) => {
      res.setHeader('x-request-id', 'r-1');
      writeRefusal(res, response, false);
    });
    const a = parse(
      await raw(apart.port, 'GET / HTTP/1.1\r\nHost: t\r\n\r\n', (t) => t.endsWith('}')),
    );
    expect(a.fields).toContainEqual(['x-request-id', 'r-1']);
    expect(a.fields.filter(([n]) => n === 'retry-after')).toEqual([['retry-after', '2']]);
    expect(apart.seen.writes).toHaveLength(1);

    const clash = await serve((res) => {
      res.setHeader('Retry-After', '99');
      res.setHeader('content-type', 'text/plain');
      writeRefusal(res, response, false);
    });
    const b = parse(
      await raw(clash.port, 'GET / HTTP/1.1\r\nHost: t\r\n\r\n', (t) => t.endsWith('}')),
    );
    expect(b.fields.filter(([n]) => n === 'retry-after')).toEqual([['retry-after', '2']]);
    expect(b.fields.filter(([n]) => n === 'content-type')).toEqual([
      ['content-type', 'application/problem+json'],
    ]);
    expect(b.body).toBe(response.body);
  });

  it('a wrapped end() (compression, say) sees the body pass through it', async () => {
    const response = refusalResponse({ reason: 'capacity' });
    const passed: unknown[] = [];
    const { port } = await serve((res) => {
      const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
      res.end = ((...a: unknown[]) => {
        passed.push(a[0]);
        return end(...a);
      }) as ServerResponse['end'];
      writeRefusal(res, response, false);
    });
    expect((await send(port)).body).toBe(response.body);
    expect(passed).toEqual([response.body]);
  });

  it('a hand-built field with a line break is never spliced into the head', async () => {
    const response = refusalResponse({ reason: 'capacity' });
    const hostile = {
      ...response,
      headers: [...response.headers, 'x-note', 'a\r\nset-cookie: stolen=1'],
    };
    const errors: unknown[] = [];
    const { port, seen } = await serve((res) => {
      try {
        writeRefusal(res, hostile, false);
      } catch (error) {
        errors.push(error);
        res.destroy();
      }
    });
    await expect(send(port)).rejects.toThrow();
    // The ordinary path's own check refuses it, as node:http refuses any such field, and
    // nothing reached the socket.
    expect(errors).toHaveLength(1);
    expect((errors[0] as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect(seen.writes).toEqual([]);
  });

  it('a field added to a built response after the fact is written too', async () => {
    const response = refusalResponse({ reason: 'capacity' });
    response.headers.push('x-shard', 'b');
    const { port } = await serve((res) => writeRefusal(res, response, false));
    const a = await send(port);
    expect(a.headers['x-shard']).toBe('b');
    expect(a.body).toBe(response.body);
  });

  it('an unusable field name, policy field or signal is never spliced into the head', async () => {
    const badName = refusalResponse(
      { reason: 'capacity' },
      { ...defaultHeaderNames, retry: 'x-retry\r\nset-cookie: a=1' },
    );
    const badPolicy = refusalResponse({
      reason: 'quota',
      retryAfterMs: 100,
      quota: {
        name: 'q',
        ratePerSec: 1,
        burst: 1,
        remaining: 0,
        resetMs: 1_000,
        policyField: '"q";q=1;w=1\r\nset-cookie: a=1',
      },
    });
    const badSignal = refusalResponse({
      reason: 'capacity',
      signal: 'later\r\nset-cookie: a=1' as 'later',
    });
    for (const response of [badName, badPolicy, badSignal]) {
      const errors: unknown[] = [];
      const { port, seen } = await serve((res) => {
        try {
          writeRefusal(res, response, false);
        } catch (error) {
          errors.push(error);
          res.destroy();
        }
      });
      await expect(send(port)).rejects.toThrow();
      expect(errors).toHaveLength(1); // node:http's own check, on the ordinary path
      expect(seen.writes).toEqual([]);
    }
  });

  it('honours strictContentLength', async () => {
    const response = refusalResponse({ reason: 'quota', retryAfterMs: 200 });
    const { port } = await serve((res) => {
      res.strictContentLength = true;
      writeRefusal(res, response, true);
    });
    const a = await send(port);
    expect(a.status).toBe(429);
    expect(a.headers.connection).toBe('close');
    expect(a.body).toBe(response.body);
  });
});
