// When a guard left at its default enters the ambient context: only once the process has a reader
// of it (a dependency(), or a call to currentContext()), because on Node 20 and 22 entering one
// turns on async hooks for the whole process. Real node:http servers on 127.0.0.1; nothing else.
// The order of the tests matters: the reader, once declared, stays for the process (a test file
// runs in a process of its own), so the tests before the dependency is made see none.
import { createServer, type Server } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import {
  ambientHasReader,
  ambientStore,
  type AmbientContext,
} from '../../src/core/ambient-context/ambient-context.js';
import { admission } from '../../src/node/index.js';
import { close, listen, send } from '../helpers/http.js';

const servers: Server[] = [];
afterAll(async () => {
  for (const s of servers) await close(s);
});

/** A guard with `ambientContext` as given whose handler answers what the store held (read without declaring a reader). */
async function guarded(ambientContext: boolean | undefined): Promise<() => Promise<string>> {
  const guard = admission({
    limit: 10,
    penaltyBox: false,
    deadlineMs: 5_000,
    ...(ambientContext === undefined ? {} : { ambientContext }),
  });
  const server = createServer(
    guard.handle(async (_req, res) => {
      await new Promise((resolve) => setImmediate(resolve));
      const seen: AmbientContext | undefined = ambientStore.getStore();
      res.end(seen === undefined ? 'none' : seen.criticality);
    }),
  );
  servers.push(server);
  const port = await listen(server);
  return async () => (await send(port, { headers: { 'spillway-criticality': 'sheddable' } })).body;
}

describe('a guard at its default enters the ambient context once the process reads it', () => {
  it('enters none while nothing in the process reads it', async () => {
    // A dependency that ignores the context is no reader.
    dependency({ name: 'deaf', baseUrl: 'http://127.0.0.1:9', ambientContext: false });
    expect(ambientHasReader()).toBe(false);
    const ask = await guarded(undefined);
    expect(await ask()).toBe('none');
    expect(await ask()).toBe('none');
  });

  it('enters it from the first request with ambientContext: true', async () => {
    const ask = await guarded(true);
    expect(await ask()).toBe('sheddable');
    expect(ambientHasReader()).toBe(false);
  });

  it('enters it once a dependency is made, for guards made before and after', async () => {
    const before = await guarded(undefined);
    expect(await before()).toBe('none');
    dependency({ name: 'reader', baseUrl: 'http://127.0.0.1:9' });
    expect(ambientHasReader()).toBe(true);
    expect(await before()).toBe('sheddable');
    expect(await (await guarded(undefined))()).toBe('sheddable');
  });

  it('enters none with ambientContext: false, reader or not', async () => {
    expect(await (await guarded(false))()).toBe('none');
  });
});
