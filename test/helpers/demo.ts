// Runs the built `spillway demo` with `--json` and returns what it printed. Exit code 1 is the
// demo's own verdict that a target was missed on this machine; the tests hold it to what they
// assert, so its JSON is read either way. Anything else (a crash, a usage error) fails.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;

export async function demoJson<T>(args: readonly string[], timeoutMs: number): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [main, 'demo', ...args], {
    maxBuffer: 16 * 1024 * 1024,
    timeout: timeoutMs,
  }).catch((error: unknown) => {
    const failed = error as { code?: unknown; stdout?: unknown };
    if (failed.code === 1 && typeof failed.stdout === 'string') return { stdout: failed.stdout };
    throw error;
  });
  return JSON.parse(stdout) as T;
}
