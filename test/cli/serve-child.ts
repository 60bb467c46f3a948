// `spillway serve …` from dist/ in a child process, as an operator runs it, for the tests that
// talk to its endpoints over loopback; every child a file starts is stopped after its tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll } from 'vitest';

/** The CLI the tests run: the build in dist/. */
export const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;

/**
 * A function that starts `spillway serve <args…>` and resolves with its port once it listens.
 * Call it at the top of a test file: the children it starts are stopped after the file's tests.
 */
export function serveChildren(): (...args: string[]) => Promise<number> {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const c of children) c.kill('SIGTERM');
  });
  return async (...args) => {
    const child = spawn(process.execPath, [main, 'serve', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    for await (const line of createInterface({ input: child.stdout })) {
      const m = /^listening on (\d+)$/.exec(line);
      if (m) return Number(m[1]);
    }
    throw new Error('serve exited before listening');
  };
}
