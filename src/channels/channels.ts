/**
 * The registry of every `node:diagnostics_channel` Spillway publishes on: each channel's name,
 * the type of its message, and when it fires. Each decision is published from the one place it
 * is made, and only when someone subscribes (`hasSubscribers`), so an unobserved guard or
 * dependency builds no message at all. `spillway/otel` builds its metrics and trace marks from
 * these channels and nothing else; anyone may subscribe by name, with or without it.
 *
 * Messages never carry the client key unless the guard was asked to publish it
 * (`admission({ publishKey: true })`): it is personal, and unbounded as a metric attribute.
 * A subscriber that throws does not disturb the publisher (Node reports the error on the next
 * tick). Messages are read synchronously: keep none of them past the call.
 *
 * @module
 */
import { channel, tracingChannel } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CircuitState, Criticality, PermitOutcome, RetrySignal } from '../index.js';
import type { RefusalReason } from '../http/index.js';

/** What became of a request that reached admission on a limited route. */
export type AdmissionResult =
  /** Let through to the handler. */
  | 'admitted'
  /** Refused; the answer's reason (never `dependency` or `failure`: those come later). */
  | RefusalReason
  /** The client went away before it was admitted or refused (while waiting in line). */
  | 'abandoned';

/**
 * `spillway:admission`: every admission decision on a route that is not exempt — admitted,
 * refused (with its reason), or abandoned while waiting in line. Published by the guard's
 * checks, at the decision; Express and Fastify go through the same checks.
 */
export interface AdmissionMessage {
  readonly result: AdmissionResult;
  /** The route's name. */
  readonly route: string;
  /** The criticality admission used; undefined when refused before it was read (penalty, spent deadline). */
  readonly criticality: Criticality | undefined;
  /** `Spillway-Attempt` of the request (1 = first try). */
  readonly attempt: number;
  /** Whether the request waited in line for a slot. */
  readonly queued: boolean;
  /** Time spent in line, in ms; 0 for a decision made at the door. */
  readonly waitMs: number;
  /** The HTTP status of a refusal (429 or 503); undefined otherwise. */
  readonly status: number | undefined;
  /** `Spillway-Retry` of a refusal; undefined otherwise. */
  readonly signal: RetrySignal | undefined;
  /** The wait a refusal asked for, in ms (`Retry-After`), if any. */
  readonly retryAfterMs: number | undefined;
  /**
   * For a refusal: whether the route had a free slot and nobody in line when it was made, so a
   * refusal for `shed` or `overloaded` turned away work there was room for (a false positive).
   * Always false for `admitted` and `abandoned`.
   */
  readonly capacityFree: boolean;
  /** The request. */
  readonly req: IncomingMessage;
  /**
   * For `admitted`: the admission's number, counting from 1 in the order admissions are
   * published, process-wide (every installed copy of Spillway shares the count); 0 for every
   * other result. Its release carries the same number: see {@link admissionsPublished}.
   */
  readonly seq: number;
  /** The client key, only with `publishKey: true`. */
  readonly key?: string;
}

/** `spillway:admission:queued`: a request starts waiting in its route's line. */
export interface QueuedMessage {
  readonly route: string;
  readonly criticality: Criticality;
  readonly req: IncomingMessage;
}

/**
 * `spillway:admission:release`: an admitted request finished and gave its slot back (once per
 * `admitted` message, whichever adapter ran it).
 */
export interface ReleaseMessage {
  readonly route: string;
  readonly criticality: Criticality;
  /** How long the slot was held (granted → released), in ms. */
  readonly heldMs: number;
  /** What the release told the route's limit (`dropped` for overload or the route's deadline). */
  readonly outcome: PermitOutcome;
  readonly req: IncomingMessage;
  /**
   * The `seq` of this request's `admitted` message; 0 when that message was not published
   * (nobody listened then).
   */
  readonly seq: number;
}

/** What became of a quota check: let through, refused for the client's quota, or the store's. */
export type QuotaResult = 'allowed' | 'quota' | 'unavailable';

/** `spillway:quota`: every per-client quota decision of a route, where it is made. */
export interface QuotaMessage {
  readonly route: string;
  readonly result: QuotaResult;
  /** True when the store could not be asked and its failure policy answered. */
  readonly degraded: boolean;
  /** The wait a refusal asked for, in ms; undefined when allowed. */
  readonly retryAfterMs: number | undefined;
  readonly req: IncomingMessage;
  /** The client key, only with `publishKey: true`. */
  readonly key?: string;
}

/**
 * What `spillway.request` carries: the guarded request, its context, and (as Node's tracing
 * channels add them) the handler's `result` or `error`.
 */
export interface RequestTraceMessage {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: string;
  readonly criticality: Criticality;
  /** What the handler returned (or its promise resolved with); set before `asyncStart`. */
  result?: unknown;
  /** What the handler threw (or its promise rejected with); set before `error`. */
  error?: unknown;
}

/**
 * How an attempt of a dependency call ended (see the client's verdicts): `ok`; `refused` (the
 * callee said it is overloaded); `bad-answer` (a 5xx that is not a refusal); `error` (the work
 * rejected with an ordinary error); `failed` (timed out, unreachable, or a bare 503); `local`
 * (refused here before anything was sent); `caller` (the caller gave up or erred).
 */
export type AttemptOutcome =
  'ok' | 'refused' | 'bad-answer' | 'error' | 'failed' | 'local' | 'caller';

/** Why an attempt was refused before anything was sent. */
export type LocalRefusal =
  'circuit-open' | 'throttled' | 'queue-full' | 'queue-timeout' | 'shed' | 'deadline' | 'other';

/** `spillway:client:attempt`: every attempt of a dependency call, when its outcome is recorded. */
export interface AttemptMessage {
  readonly dependency: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** The callee's HTTP status, when it answered one. */
  readonly status: number | undefined;
  /** Why it was refused here, for `local`; undefined otherwise. */
  readonly localReason: LocalRefusal | undefined;
}

/** `spillway:client:retry`: a dependency call will be tried again, after `backoffMs`. */
export interface RetryMessage {
  readonly dependency: string;
  /** The attempt about to be made (2 for the first retry). */
  readonly attempt: number;
  /** The wait chosen before it, in ms (backoff, or the callee's `Retry-After`). */
  readonly backoffMs: number;
  /** Retries the budget would still allow, after this one. */
  readonly budgetLeft: number;
}

/** `spillway:breaker:state`: a dependency's circuit breaker changed state. */
export interface BreakerStateMessage {
  readonly dependency: string;
  readonly from: CircuitState;
  readonly to: CircuitState;
}

/** `spillway:limit:change`: an adaptive limit of a route or a dependency moved. */
export interface LimitChangeMessage {
  /** The route it limits, when a guard's. */
  readonly route: string | undefined;
  /** The dependency it caps, when a client's. */
  readonly dependency: string | undefined;
  readonly limit: number;
  readonly previous: number;
  /** The window's RTT that led to the change, in ms; NaN if it had none. */
  readonly rttMs: number;
  /** Whether that window saw a drop or a timeout. */
  readonly dropped: boolean;
}

/** `spillway:store:degraded`: a Redis store's decisions start coming from its failure policy. */
export interface StoreDegradedMessage {
  /** `open`, `closed` or `local`: what answers while degraded. */
  readonly policy: string;
  /** What failed first (`timeout`, `error`, `not-ready`, …). */
  readonly reason: string;
}

/** `spillway:store:recovered`: a Redis store answers again. */
export interface StoreRecoveredMessage {
  readonly policy: string;
  /** How long decisions came from the failure policy, in ms. */
  readonly degradedMs: number;
}

/** `spillway:penalty`: a client moved a step on a guard's penalty ladder (up or down). */
export interface PenaltyMessage {
  /** The step now (0 = out of the box). */
  readonly step: number;
  readonly previous: number;
  /** The client key, only with `publishKey: true`. */
  readonly key?: string;
}

/** `spillway:http:refusal`: every answer Spillway writes instead of the handler's. */
export interface RefusalMessage {
  readonly reason: RefusalReason;
  readonly status: number;
  /** `Spillway-Retry` as sent; undefined for the 500. */
  readonly signal: RetrySignal | undefined;
  /** The route's name; undefined when the request never reached one (admission failed). */
  readonly route: string | undefined;
  /** The client key, only with `publishKey: true` (and when it was known). */
  readonly key: string | undefined;
}

/**
 * `spillway:retry-storm`: a route's arrivals entered or left a retry storm — most of what
 * arrives has already been tried (`Spillway-Attempt` 2 or more), so the pool behind its callers
 * is overloaded, not just this process. Published by the guard when its decision flips, at an
 * arrival; while `entered`, the route's refusals for load (`capacity`, `shed`, `overloaded`)
 * say `never` instead of `later` or `elsewhere`.
 */
export interface RetryStormMessage {
  /** The route's name. */
  readonly route: string;
  /** `entered`: refusals for load now say `never`; `left`: they say what they said before. */
  readonly state: 'entered' | 'left';
  /** Retries' share of the route's arrivals (decayed), from 0 to 1, when it flipped. */
  readonly retryShare: number;
  /** The decayed weight of the route's arrivals when it flipped (about rate × half-life / ln 2). */
  readonly arrivals: number;
}

/**
 * A channel as its publisher and subscribers see it: Node's `Channel`, typed with its message.
 * Subscribe by name with `diagnostics_channel.subscribe(name, fn)` just the same.
 */
export interface TypedChannel<T> {
  readonly name: string | symbol;
  /** True while anyone listens; publishers check it before building a message. */
  readonly hasSubscribers: boolean;
  publish(message: T): void;
  subscribe(onMessage: (message: T, name: string | symbol) => void): void;
  unsubscribe(onMessage: (message: T, name: string | symbol) => void): boolean;
}

/** Every channel's name, as subscribers spell it. */
export const channelNames = {
  admission: 'spillway:admission',
  queued: 'spillway:admission:queued',
  release: 'spillway:admission:release',
  quota: 'spillway:quota',
  request: 'spillway.request',
  attempt: 'spillway:client:attempt',
  retry: 'spillway:client:retry',
  breaker: 'spillway:breaker:state',
  limit: 'spillway:limit:change',
  storeDegraded: 'spillway:store:degraded',
  storeRecovered: 'spillway:store:recovered',
  penalty: 'spillway:penalty',
  refusal: 'spillway:http:refusal',
  retryStorm: 'spillway:retry-storm',
} as const;

/**
 * The count of `admitted` messages published, shared by every installed copy of Spillway (as
 * the channels themselves are, by name), so their numbers never collide.
 */
const admissions = ((globalThis as Record<symbol, unknown>)[
  Symbol.for('spillway.admissions.published')
] ??= { published: 0 }) as { published: number };

/**
 * The number of the last `admitted` message published (0 before the first). A subscriber that
 * reads it as it subscribes knows which admissions it saw: a release whose `seq` is above it;
 * one at or below it (or 0) was admitted before, so counting it out would count a request it
 * never counted in.
 */
export function admissionsPublished(): number {
  return admissions.published;
}

/** Numbers an admission about to be published (see {@link AdmissionMessage.seq}). @internal */
export function nextAdmissionSeq(): number {
  return ++admissions.published;
}

/** Node's channel of that name, typed with its message. */
function typed<T>(name: string): TypedChannel<T> {
  return channel(name) as unknown as TypedChannel<T>;
}

/** `spillway:admission` (see {@link AdmissionMessage}). */
export const admissionChannel = typed<AdmissionMessage>(channelNames.admission);
/** `spillway:admission:queued` (see {@link QueuedMessage}). */
export const queuedChannel = typed<QueuedMessage>(channelNames.queued);
/** `spillway:admission:release` (see {@link ReleaseMessage}). */
export const releaseChannel = typed<ReleaseMessage>(channelNames.release);
/** `spillway:quota` (see {@link QuotaMessage}). */
export const quotaChannel = typed<QuotaMessage>(channelNames.quota);
/**
 * The tracing channel `spillway.request` (`tracing:spillway.request:start`, `end`,
 * `asyncStart`, `asyncEnd`, `error`) around the handler node:http's guard runs
 * (`handle` / `run`), in the style of Fastify's `tracing:fastify.request.handler`: `start` and
 * `end` around the handler's synchronous part, `asyncStart` / `asyncEnd` around the guard's
 * finishing of the request once its work settled, `error` if it threw or rejected.
 */
export const requestChannel = tracingChannel<unknown, RequestTraceMessage>(channelNames.request);
/** `spillway:client:attempt` (see {@link AttemptMessage}). */
export const attemptChannel = typed<AttemptMessage>(channelNames.attempt);
/** `spillway:client:retry` (see {@link RetryMessage}). */
export const retryChannel = typed<RetryMessage>(channelNames.retry);
/** `spillway:breaker:state` (see {@link BreakerStateMessage}). */
export const breakerChannel = typed<BreakerStateMessage>(channelNames.breaker);
/** `spillway:limit:change` (see {@link LimitChangeMessage}). */
export const limitChannel = typed<LimitChangeMessage>(channelNames.limit);
/** `spillway:store:degraded` (see {@link StoreDegradedMessage}). */
export const storeDegradedChannel = typed<StoreDegradedMessage>(channelNames.storeDegraded);
/** `spillway:store:recovered` (see {@link StoreRecoveredMessage}). */
export const storeRecoveredChannel = typed<StoreRecoveredMessage>(channelNames.storeRecovered);
/** `spillway:penalty` (see {@link PenaltyMessage}). */
export const penaltyChannel = typed<PenaltyMessage>(channelNames.penalty);
/** `spillway:http:refusal` (see {@link RefusalMessage}). */
export const refusalChannel = typed<RefusalMessage>(channelNames.refusal);
/** `spillway:retry-storm` (see {@link RetryStormMessage}). */
export const retryStormChannel = typed<RetryStormMessage>(channelNames.retryStorm);
