/**
 * Runs a reference server (`spillway serve …`) in a child process, pinned to a CPU where
 * `taskset` exists, and reads its /stats. The demo's servers never share a process with the
 * generator that measures them, and never outlive it: however this process ends — a signal,
 * a closed pipe, an uncaught error — the servers it started end with it.
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
  /** The slow path (`--slow-ms`): per client, the most slow queries it had running at once. */
  readonly slow?: { readonly peakByClient: Readonly<Record<string, number>> };
}

/** A running reference server. */
export interface ServerProcess {
  /** The server's process id (its CPU time can be read from /proc). */
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  stats(): Promise<ServerStats>;
  /** GETs `path` (e.g. `/decisions`) and parses its JSON. */
  getJson<T>(path: string): Promise<T>;
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

/** Most servers alive at once: the demo runs one at a time, its scale-out up to 8. */
const maxLiveServers = 16;
/** The servers started here that have not exited yet. */
const live = new Set<ChildProcess>();
/** Signals that end this process, and with it its servers. */
const endSignals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Kills every live server; synchronous, so it can run in an 'exit' handler. */
function killLive(): void {
  for (const child of live) child.kill('SIGKILL');
}

/**
 * Dies of `signal` as if it had no handler, once the servers are killed: a parent then sees a
 * process killed by that signal (a shell reports 128 + its number, and a script's loop stops
 * on Ctrl-C) rather than one that chose to exit.
 */
function endBySignal(signal: (typeof endSignals)[number]): void {
  killLive();
  process.off(signal, endBySignal);
  process.kill(process.pid, signal);
}

let endHandlersInstalled = false;

/**
 * Ends the live servers whenever this process ends. 'exit' covers a normal end,
 * `process.exit()` (a closed stdout, in main.ts) and an uncaught error; a signal's default
 * action ends the process without running it, hence the signal handlers.
 */
function installEndHandlers(): void {
  if (endHandlersInstalled) return;
  endHandlersInstalled = true;
  process.on('exit', killLive);
  for (const signal of endSignals) process.on(signal, endBySignal);
}

/** Starts `spillway serve <args…>` on `cpu`; resolves once it prints its port. */
export async function startServer(
  args: readonly string[],
  cpu: number | undefined,
): Promise<ServerProcess> {
  if (live.size >= maxLiveServers) {
    throw new Error(`at most ${maxLiveServers} servers may run at once; stop one first`);
  }
  installEndHandlers();
  const command = [process.execPath, main, 'serve', ...args, '--port', '0'];
  const child: ChildProcess =
    cpu !== undefined && canPin
      ? spawn('taskset', ['-c', String(cpu), ...command], { stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  // A child that could not be spawned (no taskset after all, say) emits 'error' and no 'exit'.
  const forget = (): void => void live.delete(child);
  child.once('exit', forget);
  child.once('error', forget);
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
    child.once('error', reject);
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
    pid: child.pid!,
    port,
    url,
    stats: () => getJson<ServerStats>(`${url}/stats`),
    getJson: <T>(path: string) => getJson<T>(`${url}${path}`),
    async stop() {
      // Gone already: an exit code, or the signal that ended it.
      if (child.exitCode !== null || child.signalCode !== null) return;
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
