// A process's CPU time as the kernel counts it, read from outside: for servers a benchmark does
// not run in its own process (a CLI child, Redis), where asking the process would be its word.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** Process `pid`'s CPU time so far in µs, from /proc (utime + stime, fields 14 and 15). */
export function processCpuUs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1e6;
}
