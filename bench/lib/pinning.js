// Where the benchmarks' processes run on a 2-core machine (BENCHMARKS.md rule 6): the system
// under test on one core, the load or the measured caller on the other.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** Pins this process to CPU 1 when `taskset` exists; says whether it did. */
export function pinSelfToCpu1() {
  try {
    execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Every thread of this process on CPU 0, the server's on CPU 1; false where that fails. */
export function pinApart(serverPid) {
  if (availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-a', '-pc', '0', String(process.pid)], { stdio: 'ignore' });
    execFileSync('taskset', ['-a', '-pc', '1', String(serverPid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
