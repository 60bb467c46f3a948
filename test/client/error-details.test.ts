// What a client error tells the person reading it: the network code and address of a failure
// to connect, the last attempt's failure when retries give up, and the status and wait the
// callee gave when the retry budget stops the retries. Real sockets on 127.0.0.1.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { dependency } from '../../src/client/index.js';
import {
  DependencyOverloadedError,
  DependencyUnreachableError,
  RetryBudgetExhaustedError,
  retryBudget,
} from '../../src/index.js';
import { startServer } from './servers.js';

/** A port with nothing listening on it (taken, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('client errors say what happened', () => {
  it('a refused connection names its code and address, through the retries too', async () => {
    const port = await closedPort();
    const dep = dependency({
      name: 'users',
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 2, backoff: { baseMs: 1, capMs: 1 } },
    });
    const error = (await dep.fetch('/').catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(DependencyOverloadedError);
    expect((error as DependencyOverloadedError).attempts).toBe(2);
    expect(error.message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(error.cause).toBeInstanceOf(DependencyUnreachableError);
    expect((error.cause as Error).message).toContain(
      `users unreachable (ECONNREFUSED 127.0.0.1:${port}; request not sent)`,
    );
  });

  it('a spent budget keeps the status and the wait the callee gave', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(429, { 'retry-after': '0' });
      res.end('slow down');
    });
    try {
      const budget = retryBudget({ maxTokens: 1 });
      const dep = dependency({ name: 'quota', baseUrl: server.url, budget, throttle: false });
      const error = (await dep.fetch('/').catch((e: unknown) => e)) as RetryBudgetExhaustedError;
      expect(error).toBeInstanceOf(RetryBudgetExhaustedError);
      expect(error).toMatchObject({ status: 429, retryAfterMs: 0, signal: 'never', attempts: 1 });
      expect(error.message).toContain('quota refused the request (429)');
    } finally {
      await server.close();
    }
  });
});
