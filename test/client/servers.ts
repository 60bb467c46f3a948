// Loopback node:http servers for the client tests: each records what it received, and
// `hop()` builds a service behind the HTTP guard that calls the next hop through
// `dependency()`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dependency } from '../../src/client/index.js';
import { refusalFromError, refusalResponse } from '../../src/http/index.js';
import { admission } from '../../src/node/index.js';

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly at: number;
}

export interface TestServer {
  readonly url: string;
  readonly seen: Seen[];
  readonly server: Server;
  close(): Promise<void>;
}

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => unknown;

/** Starts a server on 127.0.0.1, port 0. `now` timestamps what it receives (a virtual clock's, say). */
export async function startServer(
  handler: Handler,
  now: () => number = () => performance.now(),
): Promise<TestServer> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: now() });
    void Promise.resolve(handler(req, res, seen.length)).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes the response the HTTP guard would write for a handler that threw `error`. */
export function answerError(res: ServerResponse, error: unknown): void {
  const refusal = refusalFromError(error);
  if (refusal === undefined) {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(error));
    return;
  }
  const r = refusalResponse(refusal);
  res.writeHead(r.status, r.headers);
  res.end(r.body);
}

/**
 * A middle service behind the real HTTP guard (`spillway/node`): the guard turns the incoming
 * `Spillway-Deadline` and `Spillway-Criticality` into the request's context; the service
 * optionally works for `workMs`, calls `next` through its dependency with that context's
 * deadline and criticality, relays a success, and lets the guard answer a failure (a
 * dependency's overload goes up with its signal, `never` once a layer below retried).
 */
export function hop(
  next: () => Dependency,
  options: { path?: string; workMs?: number } = {},
): Handler {
  const guard = admission({ limit: 1_000, maxQueue: 0, penaltyBox: false });
  return guard.handle(async (_req, res, ctx) => {
    if (options.workMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, options.workMs));
    }
    const r = await next().fetch(options.path ?? '/', undefined, {
      deadline: ctx,
      criticality: ctx.criticality,
    });
    const body = await r.text();
    res.writeHead(r.status, { 'content-type': 'text/plain' });
    res.end(body);
  });
}

/** Resolves once `promise` settles, advancing `clock` in steps while real I/O proceeds. */
export async function settleWith<T>(
  promise: Promise<T>,
  clock: { advance(ms: number): Promise<void> },
  stepMs = 20,
): Promise<T> {
  let done = false;
  const watched = promise.finally(() => {
    done = true;
  });
  watched.catch(() => {});
  for (let i = 0; i < 20_000 && !done; i++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    if (!done) await clock.advance(stepMs);
  }
  return watched;
}
