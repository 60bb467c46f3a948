// `app.use(guard)` in Express, over real sockets on a virtual clock: middleware cannot see when
// the work after it settles, so a client that leaves must not free the slot while that work
// goes on. The slot is held until the handler ends the response, or at most until the route's
// own deadline passes.
import { createServer, type Server } from 'node:http';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { spillway } from '../../src/express/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send, until, type Answer } from '../helpers/http.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

/** A server with the guard as middleware in front of work that ignores its signal. */
async function start(deadlineMs: number) {
  const clock = createVirtualClock();
  const guard = spillway({ clock, limit: 1, maxQueue: 0, deadlineMs, penaltyBox: false });
  const gates: (() => void)[] = [];
  const work = { running: 0, most: 0 };
  const app = express();
  app.use(guard);
  const goOn = async () => {
    work.running++;
    work.most = Math.max(work.most, work.running);
    await new Promise<void>((resolve) => gates.push(resolve));
    work.running--;
  };
  app.get('/work', async (_req, res) => {
    await goOn();
    res.end('done'); // on a closed response too: that is how the guard learns the work is over
  });
  app.get('/abandon', async () => {
    await goOn(); // and never ends the response
  });
  app.get('/quick', (_req, res) => void res.end('quick'));
  const server = createServer(app);
  servers.push(server);
  let closed = 0;
  server.on('connection', (socket) => socket.on('close', () => closed++));
  const port = await listen(server);
  return {
    clock,
    port,
    work,
    closed: () => closed,
    active: () => guard.admission.stats()?.active,
    release: () => gates.splice(0).forEach((f) => f()),
  };
}

/** Sends, and aborts once the request has been admitted. */
async function sendThenLeave(s: Awaited<ReturnType<typeof start>>, path: string) {
  const controller = new AbortController();
  const pending = send(s.port, { path, signal: controller.signal }).catch(() => 'gone');
  await until(() => s.work.running === 1);
  controller.abort();
  expect(await pending).toBe('gone');
}

describe('Express middleware mode', () => {
  it('a client that leaves does not free the slot while its work goes on', async () => {
    const s = await start(30_000);
    await sendThenLeave(s, '/work');
    await until(() => s.closed() === 1);
    // Four more clients while the first one's work goes on: none of them starts work beside it.
    for (let i = 0; i < 4; i++) {
      let answer: Answer | undefined;
      void send(s.port, { path: '/work' }).then((a) => (answer = a));
      await until(() => answer !== undefined || s.work.running > 1);
      expect(s.work.running).toBe(1);
      expect(answer?.status).toBe(503);
    }
    expect(s.active()).toBe(1);
    s.release(); // the work ends the (closed) response
    await until(() => s.active() === 0);
    expect(s.work.most).toBe(1);
    expect((await send(s.port, { path: '/quick' })).status).toBe(200);
    expect(s.active()).toBe(0);
  });

  it('work that never ends the response holds the slot until the route’s deadline passes', async () => {
    const s = await start(10_000);
    await sendThenLeave(s, '/abandon');
    await until(() => s.closed() === 1);
    expect(s.active()).toBe(1);
    await s.clock.advance(9_999);
    expect(s.active()).toBe(1);
    expect((await send(s.port, { path: '/quick' })).status).toBe(503);
    await s.clock.advance(1);
    expect(s.active()).toBe(0);
    expect((await send(s.port, { path: '/quick' })).status).toBe(200);
    s.release();
  });
});
