/**
 * Runs a reference server (`spillway serve …`) in a child process, pinned to a CPU where
 * `taskset` exists, and reads its /stats. The demo's servers never share a process with the
 * generator that measures them.
 *
 * @module
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** What /stats answers. */
export interface ServerStats {
  readonly rssBytes: number;
  readonly maxRssBytes: number;
  /** The simulated database: connections in use and queries waiting for one. */
  readonly db?: { readonly busy: number; readonly waiting: number };
}

/** A running reference server. */
export interface ServerProcess {
  readonly port: number;
  readonly url: string;
  stats(): Promise<ServerStats>;
  stop(): Promise<void>;
}

/** Whether `taskset` works here (Linux with util-linux). */
export const canPin: boolean = (() => {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Pins this process to `cpu` (no-op without taskset). */
export function pinSelf(cpu: number): void {
  if (!canPin) return;
  try {
    execFileSync('taskset', ['-p', '-c', String(cpu), String(process.pid)], { stdio: 'ignore' });
  } catch {
    // Not allowed here (a container's cpuset, say): run unpinned.
  }
}

const main = fileURLToPath(new URL('../main.js', import.meta.url));

/** Starts `spillway serve <args…>` on `cpu`; resolves once it prints its port. */
export async function startServer(
  args: readonly string[],
  cpu: number | undefined,
): Promise<ServerProcess> {
  const command = [process.execPath, main, 'serve', ...args, '--port', '0'];
  const child: ChildProcess =
    cpu !== undefined && canPin
      ? spawn('taskset', ['-c', String(cpu), ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    if (stderr.length < 4_000) stderr += c.toString();
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = /^listening on (\d+)$/.exec(line);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) =>
      reject(
        new Error(
          `spillway serve ${args.join(' ')} exited (${code}) before listening: ${stderr.trim()}`,
        ),
      ),
    );
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    stats: () => getJson<ServerStats>(`${url}/stats`),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

function getJson<T>(url: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body) as T);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 10 s`)));
    req.on('error', reject);
    req.end();
  });
}
