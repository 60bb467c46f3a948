/**
 * One scenario against one server: a gentle warm-up, the idle server's memory, a short warm-up
 * at the scenario's own load, an unloaded timing once the server is idle again, the rush (and
 * the request sent after it, in a run of its own), and the server's peak memory.
 *
 * @module
 */
import { request } from 'node:http';
import { formatMs, runLoad, type LoadGroup, type LoadResult } from '../../load/index.js';
import { progressReporter } from '../progress.js';
import { fetchRunDecisions } from './decision-panels.js';
import {
  capacityPerSec,
  goodputFraction,
  nextRequestText,
  probeOutcome,
  sum,
  type RunRecord,
  type ServerName,
} from './records.js';
import { callerDeadlineMs, slotsSetup, type Scenario } from './scenarios.js';
import type { ServerProcess } from './server-process.js';

export async function runOne(
  run: {
    readonly scenario: Scenario;
    readonly server: ServerName;
    readonly target: ServerProcess;
    readonly nextRequestDeadlineMs: number;
    /** The server traces its decisions (`--decisions`): fetch the run's windows after it. */
    readonly decisions?: boolean;
  },
  log: (line: string) => void,
): Promise<RunRecord> {
  const { scenario, server, target } = run;
  await gentleWarmUp(target.url);
  const idle = await target.stats();
  // Then offer the scenario's own load for a moment, so that what the rush runs — refusals
  // above all, which the gentle warm-up never reaches — is compiled before it is measured:
  // on one core, V8 compiling a server's hot paths under a sudden 10× load takes most of a
  // second of CPU and would be charged to the first second of the run. Every server gets the
  // same, and each is measured once its database is idle again (the naive one works through
  // the line it let form), so no server starts the rush with a backlog.
  const warmupMs = warmupMsOf(scenario, server);
  await runLoad({
    url: `${target.url}/warmup`,
    durationMs: warmupMs,
    groups: scenario.groups.map((g) => warmupGroup(g, warmupMs)),
  });
  const drainedInMs = await untilIdle(target, maxDrainMs);
  if (drainedInMs === undefined) {
    log(`  ${server}: still busy ${maxDrainMs / 1_000} s after the warm-up; measuring anyway`);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
  const unloadedMs = await medianRequestMs(`${target.url}/unloaded`, 5);
  const progress = progressReporter(process.stderr, 1);
  // The probe is its own run, started 100 ms after the rush's schedule ends, so the rush's
  // figures stay its own.
  const probe = scenario.nextRequest
    ? new Promise<LoadResult>((resolve, reject) => {
        setTimeout(() => {
          runLoad({
            url: `${target.url}/next`,
            durationMs: 1,
            groups: [
              {
                name: 'next request',
                ratePerSec: 1_000,
                maxRequests: 1,
                deadlineMs: run.nextRequestDeadlineMs,
              },
            ],
            headers: { 'x-client-id': 'latecomer' },
          }).then(resolve, reject);
        }, scenario.durationMs + 100);
      })
    : undefined;
  // The slowdown: change the database's speed on schedule, and watch the route's limit.
  const timers: ReturnType<typeof setTimeout>[] = [];
  const limitTrace: number[] = [];
  let poll: ReturnType<typeof setInterval> | undefined;
  const slow = scenario.slowdown;
  if (slow !== undefined) {
    const setSpeed = (ms: number) => () => void adminGet(`${target.url}/admin/service-ms?ms=${ms}`);
    timers.push(setTimeout(setSpeed(slow.serviceMs), slow.atMs));
    timers.push(setTimeout(setSpeed(30), slow.untilMs));
    poll = setInterval(() => {
      target.stats().then(
        (st) => {
          const limit = (st as { guard?: { limit?: number } }).guard?.limit;
          if (typeof limit === 'number' && limitTrace.length < 1_000) limitTrace.push(limit);
        },
        () => undefined,
      );
    }, 500);
  }
  const result = await runLoad({
    url: `${target.url}/work`,
    durationMs: scenario.durationMs,
    groups: scenario.groups,
    scenario: scenario.id,
    series: server,
    label: `${scenario.id} · ${server}`,
    onWindow: ({ totals }) => progress.update(totals),
  });
  progress.finish();
  timers.forEach(clearTimeout);
  if (poll !== undefined) clearInterval(poll);
  // The trace's last window closes a moment after the run: wait for it while the probe runs.
  const tracing = run.decisions === true ? fetchRunDecisions(target, result) : undefined;
  tracing?.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
  const probed = probe === undefined ? undefined : probeOutcome(await probe);
  const after = await target.stats();
  const decisions = await tracing;
  // A request that gave up waiting says how long it waited, not how long it would have taken:
  // the work still queued ahead of it says the rest.
  const next =
    probed?.outcome === 'timeout' && after.db !== undefined
      ? { ...probed, queuedMs: ((after.db.busy + after.db.waiting) / capacityPerSec) * 1_000 }
      : probed;
  const holderPeakSlots = after.slow?.peakByClient[slotsSetup.holder];
  const ok = sum(result.groups, (g) => g.ok);
  const sent = sum(result.groups, (g) => g.sent);
  log(
    `  ${server.padEnd(8)} G ${goodputFraction(result).toFixed(2)}  ok ${ok}/${sent}  ` +
      `ok p99 ${formatMs(result.totals.latencyMs.ok?.p99)}  next request ${nextRequestText(next)}` +
      (holderPeakSlots === undefined ? '' : `  holder slots (peak) ${holderPeakSlots}`) +
      (result.validity.valid ? '' : `  [not valid: ${result.validity.reasons.join('; ')}]`),
  );
  return {
    scenario,
    server,
    result,
    next,
    ...(slow === undefined ? {} : { limitTrace }),
    ...(decisions === undefined ? {} : { decisions }),
    ...(holderPeakSlots === undefined ? {} : { holderPeakSlots }),
    unloadedMs,
    idleRssBytes: idle.rssBytes,
    peakRssBytes: after.maxRssBytes,
  };
}

/**
 * Warms both sides up (JIT, connections) just under capacity, 0.3 s, after which the server at
 * `url` is idle again: its memory then is the demo's idle RSS. `bench/ladder.js` warms the same way.
 */
export function gentleWarmUp(url: string): Promise<LoadResult> {
  return runLoad({
    url: `${url}/warmup`,
    ratePerSec: 300,
    durationMs: 300,
    deadlineMs: callerDeadlineMs,
  });
}

/**
 * How long `server` gets the scenario's own load before it is measured, unless the scenario
 * says (`Scenario.warmupMs`): 2 s, and 0.5 s for the naive server. A fresh process is still
 * tiering up its hot paths half a second into a rush — Spillway's more than a bare bulkhead's,
 * and on Node 22 both: after 0.5 s of 10 × (Node 22, three runs each) ok p99 read 78–100 ms and
 * refusal p99 10–26 ms for the bulkhead and Spillway alike; after 2 s, 66–68 ms and 3.8–7.3 ms.
 * (0.25 s left Spillway's refusal path cold on Node 20: refusal p99 42–54 ms.) The naive server
 * has no refusal path to compile, and whatever its warm-up lets queue it must work off before
 * it is measured — 20 s of work after 2 s of 10 ×.
 */
export function warmupMsOf(scenario: Scenario, server: ServerName): number {
  return scenario.warmupMs ?? (server === 'naive' ? 500 : 2_000);
}
/** The longest the demo waits for a server to finish its warm-up's work. */
const maxDrainMs = 30_000;

/** A scenario's group for the warm-up: its rate and shape, from clients of their own. */
function warmupGroup(g: LoadGroup, durationMs: number): LoadGroup {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(g.headers ?? {})) headers[name] = `warmup-${value}`;
  return { ...g, name: `warmup ${g.name ?? ''}`, headers, startMs: 0, durationMs };
}

/** Waits until the server's database has nothing in use or waiting; ms taken, or undefined. */
async function untilIdle(target: ServerProcess, maxMs: number): Promise<number | undefined> {
  const t0 = performance.now();
  for (;;) {
    const { db } = await target.stats();
    const waited = performance.now() - t0;
    if (db === undefined || (db.busy === 0 && db.waiting === 0)) return waited;
    if (waited >= maxMs) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function adminGet(url: string): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', () => resolve());
    req.end();
  });
}

function medianRequestMs(url: string, n: number): Promise<number> {
  const once = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - t0));
      });
      req.on('error', reject);
      req.end();
    });
  return (async () => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) times.push(await once());
    times.sort((a, b) => a - b);
    return times[Math.floor(n / 2)]!;
  })();
}
