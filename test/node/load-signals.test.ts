// The guard wired to the adaptive parts: an adaptive limit learns from the guard's outcomes
// (a dependency's overload counts as a drop), and the event-loop signal sheds by criticality.
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { aimdLimit, DependencyOverloadedError } from '../../src/index.js';
import { admission } from '../../src/node/index.js';
import { createVirtualClock } from '../../src/testing/index.js';
import { close, listen, send } from '../helpers/http.js';
import { loopMonitor } from '../helpers/stand-ins.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

describe('the guard and load signals', () => {
  it('an adaptive route limit backs off when the handler’s dependency is overloaded', async () => {
    const clock = createVirtualClock();
    const limit = aimdLimit({
      initialLimit: 40,
      minLimit: 5,
      maxLimit: 100,
      minWindowMs: 0,
      maxWindowMs: 0,
      minWindowSamples: 1,
      clock,
    });
    const guard = admission({ limit, clock, penaltyBox: false });
    let failing = true;
    const server = createServer(
      guard.handle(async (_req, res) => {
        await clock.advance(5);
        if (failing) throw new DependencyOverloadedError('db busy', { signal: 'later' });
        res.end('ok');
      }),
    );
    servers.push(server);
    const port = await listen(server);
    for (let i = 0; i < 8; i++) expect((await send(port)).status).toBe(503);
    const afterDrops = limit.current;
    expect(afterDrops).toBeLessThan(40 * 0.9 ** 4);
    expect(guard.stats()?.limit).toBe(afterDrops);
    failing = false;
    for (let i = 0; i < 8; i++) expect((await send(port)).status).toBe(200);
    expect(guard.inflight).toBe(0);
  });

  it('sheds by the event-loop signal before taking a slot, and reports completions to it', async () => {
    const completions: number[] = [];
    let saturated = false;
    const monitor = loopMonitor(
      (criticality) => saturated && criticality === 'sheddable',
      (ms) => void completions.push(ms),
    );
    const clock = createVirtualClock();
    const guard = admission({ eventLoop: monitor, clock });
    const server = createServer(guard.handle((_req, res) => res.end('ok')));
    servers.push(server);
    const port = await listen(server);
    const sheddable = { 'spillway-criticality': 'sheddable' };
    expect((await send(port, { headers: sheddable })).status).toBe(200);
    saturated = true;
    const refused = await send(port, { headers: sheddable });
    expect(refused.status).toBe(503);
    expect(refused.json()).toMatchObject({
      type: 'urn:spillway:problem:server-overloaded',
      spillwayRetry: 'later',
    });
    expect((await send(port)).status).toBe(200); // critical work still goes through
    expect(completions).toHaveLength(2);
    guard.close();
  });

  it('starts and stops its own monitor when asked for one', () => {
    const guard = admission({ eventLoop: { sampleIntervalMs: 50 } });
    expect(guard.eventLoop?.saturated).toBe(false);
    guard.close();
    guard.close();
  });
});
