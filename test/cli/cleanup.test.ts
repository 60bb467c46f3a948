// However `spillway demo` is stopped — a signal to it alone (`kill`, a closed terminal) or a
// reader that goes away (`spillway demo 2>&1 | head -3`) — the servers it started in child
// processes end with it; and no command prints a stack trace for a closed pipe.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';

const main = new URL('../../dist/cli/main.js', import.meta.url).pathname;

/** Every process started here, and every server seen, killed at the end whatever happened. */
const started: ChildProcess[] = [];
const servers = new Set<number>();
afterAll(() => {
  for (const child of started) child.kill('SIGKILL');
  for (const pid of servers) if (isLiveServer(pid)) process.kill(pid, 'SIGKILL');
});

/** The contents of /proc/<pid>/<file>, or undefined once the process is gone. */
function proc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** The arguments `pid` runs with (`taskset -c 0 node main.js serve …` or `node main.js serve …`). */
function argv(pid: number): string[] {
  return (proc(pid, 'cmdline') ?? '').split('\0');
}

/** Whether `pid` is a `spillway serve` still running (not gone, not a zombie left unreaped). */
function isLiveServer(pid: number): boolean {
  const stat = proc(pid, 'stat');
  // The state follows the command name, which is in parentheses and may hold spaces.
  const state = stat?.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== undefined && state !== 'Z' && argv(pid).includes('serve');
}

/** The `spillway serve` processes whose parent is `parent`. */
function serversOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = proc(pid, 'stat');
    const ppid = Number(stat?.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === parent && isLiveServer(pid)) pids.push(pid);
  }
  return pids;
}

/** Whether `pid` holds a listening TCP socket: a server that has started, not one starting. */
function listens(pid: number): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  const sockets = new Set<string>();
  for (const fd of fds) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode !== undefined) sockets.add(inode);
    } catch {
      // Closed while we looked.
    }
  }
  // Columns: sl, local address, remote address, state (0A is LISTEN), queues, timers,
  // retransmits, uid, timeout, inode.
  const table = `${proc(pid, 'net/tcp') ?? ''}${proc(pid, 'net/tcp6') ?? ''}`;
  return table.split('\n').some((line) => {
    const field = line.trim().split(/\s+/);
    return field[3] === '0A' && sockets.has(field[9] ?? '');
  });
}

/** Polls until `done()` or `ms` pass; whether it came true. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** Starts a short demo and resolves once its server listens, with that server's pid. */
async function demoWithServer(): Promise<{ child: ChildProcess; pids: number[] }> {
  const child = spawn(
    process.execPath,
    [main, 'demo', '--quick', '--scenarios', 'reference', '--servers', 'naive', '--no-report'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  started.push(child);
  let pids: number[] = [];
  const found = await until(() => {
    pids = serversOf(child.pid!);
    return (pids.length > 0 && pids.every(listens)) || child.exitCode !== null;
  }, 60_000);
  expect(found && pids.length, 'servers the demo runs').toBe(1);
  for (const pid of pids) servers.add(pid);
  return { child, pids };
}

/** The child's exit code and signal, once it exits. */
async function exited(child: ChildProcess): Promise<[number | null, string | null]> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return [child.exitCode, child.signalCode];
  }
  return (await once(child, 'exit')) as [number | null, string | null];
}

describe('spillway demo ends its servers with it', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`on ${signal} to the demo alone`, { timeout: 120_000 }, async () => {
      const { child, pids } = await demoWithServer();
      child.kill(signal);
      // It dies of the signal, as an unhandled one would: a shell sees 128 + its number.
      expect(await exited(child)).toEqual([null, signal]);
      // Generous: the kernel ends a killed process at once, but this machine may be busy.
      expect(await until(() => !pids.some(isLiveServer), 20_000), 'servers gone').toBe(true);
    });
  }

  it('when its output pipes close (EPIPE): exit code 141, servers gone', async () => {
    const { child, pids } = await demoWithServer();
    // The reader goes away; the demo finds out at its next line of progress.
    child.stdout!.destroy();
    child.stderr!.destroy();
    expect(await exited(child)).toEqual([141, null]);
    expect(await until(() => !pids.some(isLiveServer), 20_000), 'servers gone').toBe(true);
  }, 120_000);
});

describe('a closed stdout', () => {
  it('ends spillway serve quietly with exit code 141, not a stack trace', async () => {
    // `head -0` stands for any reader that leaves before `listening on <port>` is written.
    const child = spawn(process.execPath, [main, 'serve', 'naive'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    started.push(child);
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    expect(await exited(child)).toEqual([141, null]);
    expect(stderr).toBe('');
  });
});
