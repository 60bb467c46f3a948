/**
 * The shapes of a simulation: nodes (servers, and whom they call), clients (users arriving and
 * whom they call), the retry policy of every call, and the result a run returns — plain data,
 * so a run is described and answered in JSON.
 *
 * @module
 */
import type { DependencyOptions } from '../client/index.js';
import type { ArrivalOptions } from './arrivals.js';
import type { ServiceTime } from './service-time.js';

/** The dependency options a simulated call may set (the simulator supplies name, clock, work). */
export type SimDependencyOptions = Omit<
  DependencyOptions,
  'name' | 'clock' | 'fetch' | 'baseUrl' | 'headerNames'
>;

/** How a caller retries one callee. */
export type RetryPolicy =
  /** One attempt, abandoned after `timeoutMs`. */
  | { readonly kind: 'none'; readonly timeoutMs?: number }
  /**
   * What most code does: up to `maxAttempts` on any failure or timeout, `delayMs` apart, no
   * budget, no signal read. Not Spillway: the control group. @default maxAttempts 3, delayMs 0
   */
  | {
      readonly kind: 'naive';
      readonly maxAttempts?: number;
      readonly timeoutMs?: number;
      readonly delayMs?: number;
    }
  /**
   * Spillway's `dependency()`, built with these options on the simulator's clock: its cap,
   * retry loop, budget, breaker and throttle run as they do in production. Its backoff's and
   * throttle's `random` come from the run's seed unless a built backoff or throttle is given.
   */
  | { readonly kind: 'spillway'; readonly options?: SimDependencyOptions };

/** An adaptive limit by name, built by the simulator (Vegas with the run's generator). */
export type SimLimit = number | 'aimd' | 'gradient' | 'vegas';

/** A simulated service: K slots, a service time, a line, and what it does with a request. */
export interface SimNode {
  readonly name: string;
  /** Requests served at once (K). */
  readonly slots: number;
  /** How long a request holds a slot. */
  readonly serviceTime: ServiceTime;
  /** Capacity over time: from `atMs` on, `slots` slots (a dip and its end are two steps). */
  readonly capacityChanges?: readonly { readonly atMs: number; readonly slots: number }[];
  /**
   * Restarts: at `atMs` the line is emptied (every waiting request is answered with a 503) and
   * for `downMs` every request arriving is refused at once; requests being served finish.
   * @default []
   */
  readonly restarts?: readonly { readonly atMs: number; readonly downMs: number }[];
  /**
   * Requests waiting for a slot, FIFO, served whether or not their caller still waits (as a
   * plain server does); more are refused at once with a 503. At most 1,000,000
   * (`simLimits.line`). @default 1_000
   */
  readonly maxQueue?: number;
  /**
   * Spillway's admission in front of the slots: a `concurrencyLimit` (fixed or adaptive) that
   * honours the propagated deadline. @default undefined (none)
   */
  readonly guard?: {
    readonly limit: SimLimit;
    /** @default 0 */
    readonly maxQueue?: number;
    /** @default 1_000 */
    readonly maxQueueWaitMs?: number;
  };
  /** A leaf's answer once served: success, or a refusal (503). @default 'ok' */
  readonly answer?: 'ok' | 'refuse';
  /** Callees, called in parallel once served (a chain has one, a fan-out several). */
  readonly calls?: readonly { readonly to: string; readonly retry: RetryPolicy }[];
}

/** Users arriving at one node. */
export interface SimClient {
  readonly name: string;
  readonly to: string;
  readonly arrivals: ArrivalOptions;
  /** How long a user waits for an answer, in ms. */
  readonly deadlineMs: number;
  readonly retry: RetryPolicy;
}

/** One run. */
export interface SimulationOptions {
  /** Seed of every random number in the run. @default 1 */
  readonly seed?: number;
  /** Simulated time arrivals run for, in ms. */
  readonly durationMs: number;
  /** Simulated time after the arrivals stop for calls in flight to end, in ms. @default 30_000 */
  readonly drainMs?: number;
  readonly nodes: readonly SimNode[];
  readonly clients: readonly SimClient[];
  /** Width of a timeline bucket, in ms. @default 1_000 */
  readonly bucketMs?: number;
  /** Most events pending at once; more fail the run with `SimEventsFullError`. @default 1_000_000 */
  readonly maxEvents?: number;
}

/** What one node saw. */
export interface NodeResult {
  /** Attempts that reached it. */
  readonly received: number;
  /** Refused at once: its line (or its guard) was full. */
  readonly refused: number;
  /** Served to the end of their service time. */
  readonly served: number;
  /** Served after their caller had given up (work nobody waited for). */
  readonly wasted: number;
  /** Attempts received per timeline bucket. */
  readonly receivedPerBucket: readonly number[];
}

/** What one client's users got. */
export interface ClientResult {
  /** User actions started. */
  readonly actions: number;
  /** Answered with success within the deadline. */
  readonly succeeded: number;
  readonly failed: number;
  /** User actions arriving per bucket, and those of them that succeeded. */
  readonly offeredPerBucket: readonly number[];
  readonly goodputPerBucket: readonly number[];
}

/** A run's answer: the same options and seed always give the same one. */
export interface SimulationResult {
  readonly seed: number;
  readonly durationMs: number;
  readonly bucketMs: number;
  /** Simulated time at the end, in ms. */
  readonly endedAtMs: number;
  /** Events fired. */
  readonly events: number;
  readonly nodes: Readonly<Record<string, NodeResult>>;
  readonly clients: Readonly<Record<string, ClientResult>>;
}
