// Local HTTP servers with known behaviour for the generator's socket tests. Not a test file.
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestServer {
  readonly url: string;
  readonly server: Server;
  /** Requests received, with their arrival time (performance.now()). */
  readonly arrivals: number[];
  /** Connections accepted. */
  connections: number;
  /** URLs of requests whose client went away before the response was written. */
  readonly abandoned: string[];
  close(): Promise<void>;
}

export async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<TestServer> {
  const arrivals: number[] = [];
  const server = createServer((req, res) => {
    arrivals.push(performance.now());
    res.on('close', () => {
      if (!res.writableFinished) state.abandoned.push(req.url ?? '');
    });
    handler(req, res);
  });
  server.on('connection', () => state.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: TestServer = {
    url: `http://127.0.0.1:${port}`,
    server,
    arrivals,
    connections: 0,
    abandoned: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return state;
}

/**
 * A server with a known capacity: `slots` requests served at once, each held `serviceMs`
 * (a timer, so capacity does not depend on CPU), a line of `queue`; beyond that, 503 at once.
 */
export function boundedHandler(options: { slots: number; serviceMs: number; queue: number }) {
  let active = 0;
  const line: ServerResponse[] = [];
  const start = (res: ServerResponse): void => {
    active++;
    setTimeout(() => {
      res.end('ok');
      active--;
      const next = line.shift();
      if (next !== undefined) start(next);
    }, options.serviceMs);
  };
  return (_req: IncomingMessage, res: ServerResponse): void => {
    if (active < options.slots) start(res);
    else if (line.length < options.queue) line.push(res);
    else {
      res.writeHead(503, { 'retry-after': '1', 'content-length': '0' });
      res.end();
    }
  };
}

/**
 * A trivial server in a child process that stalls its own event loop for `stallMs` when it
 * receives its `stallAt`-th request (what a GC pause or a blocking call does to a server).
 */
export async function startStallingServer(options: {
  stallAt: number;
  stallMs: number;
}): Promise<{ url: string; child: ChildProcess; close(): void }> {
  const code = `
    const { createServer } = require('node:http');
    let n = 0;
    const server = createServer((req, res) => {
      if (++n === ${options.stallAt}) { const until = Date.now() + ${options.stallMs}; while (Date.now() < until); }
      res.end('ok');
    });
    server.listen(0, '127.0.0.1', () => process.send(server.address().port));
  `;
  const child = fork('-e', [code], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (port) => resolve(`http://127.0.0.1:${Number(port)}`));
    child.once('error', reject);
  });
  return { url, child, close: () => child.kill() };
}

/**
 * {@link boundedHandler} in a child process, so the server under test does not share an event
 * loop with the generator measuring it.
 */
export async function startBoundedServerProcess(options: {
  slots: number;
  serviceMs: number;
  queue: number;
}): Promise<{ url: string; close(): void }> {
  const code = `
    const { createServer } = require('node:http');
    let active = 0;
    const line = [];
    const start = (res) => {
      active++;
      setTimeout(() => {
        res.end('ok');
        active--;
        const next = line.shift();
        if (next !== undefined) start(next);
      }, ${options.serviceMs});
    };
    const server = createServer((req, res) => {
      if (active < ${options.slots}) start(res);
      else if (line.length < ${options.queue}) line.push(res);
      else { res.writeHead(503, { 'retry-after': '1', 'content-length': '0' }); res.end(); }
    });
    server.listen(0, '127.0.0.1', () => process.send(server.address().port));
  `;
  const child = fork('-e', [code], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (port) => resolve(`http://127.0.0.1:${Number(port)}`));
    child.once('error', reject);
  });
  return { url, close: () => child.kill() };
}
