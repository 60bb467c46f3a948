/**
 * The messages the guard's checks publish on `spillway:admission`, `spillway:quota`,
 * `spillway:admission:queued` and `spillway:admission:release` (see `src/channels`), built
 * here so the checks stay a list of checks. Every function is called only after its channel's
 * `hasSubscribers` said someone listens: an unobserved guard reaches none of this.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { ConcurrencyLimit, Criticality, PermitOutcome, RateDecision } from '../index.js';
import type { Refusal, RefusalResponse } from '../http/index.js';
import {
  admissionChannel,
  nextAdmissionSeq,
  quotaChannel,
  releaseChannel,
  type AdmissionMessage,
} from '../channels/channels.js';
import type { Admitted, ContextInit } from './request-context.js';

/** What the checks know of a request when they decide for it. */
export interface DecisionSubject {
  readonly route: string;
  readonly criticality: Criticality | undefined;
  readonly attempt: number;
  readonly req: IncomingMessage;
  /** When it joined the line, on the guard's clock; undefined for a decision at the door. */
  readonly queuedAt: number | undefined;
  /** The client key, when the guard publishes it; undefined otherwise. */
  readonly key: string | undefined;
}

/** A refusal as written: the decision and its response. */
export interface RefusalOutcome {
  readonly refusal: Refusal;
  readonly response: RefusalResponse;
}

/** What the checks know of a request that waited in line (its context was to start from `init`). */
export function lineSubject(init: ContextInit): DecisionSubject {
  return {
    route: init.route,
    criticality: init.criticality,
    attempt: init.attempt,
    req: init.req,
    queuedAt: init.startedAt,
    key: init.publishKey === true ? init.key : undefined,
  };
}

/** Publishes an admission: at the door, or after `waitMs` in line. */
export function publishAdmitted(context: Admitted, waitMs: number | undefined): void {
  const seq = nextAdmissionSeq();
  context.admissionSeq = seq;
  admissionChannel.publish(
    withKey(
      {
        result: 'admitted',
        route: context.route,
        criticality: context.criticality,
        attempt: context.attempt,
        queued: waitMs !== undefined,
        waitMs: waitMs ?? 0,
        status: undefined,
        signal: undefined,
        retryAfterMs: undefined,
        capacityFree: false,
        req: context.req,
        seq,
      },
      context.publishKey ? context.key : undefined,
    ),
  );
}

/**
 * Publishes a refusal (`refusal` with its `response`), or, without them, a request abandoned
 * by its client. `limiter` is the route's, read for `capacityFree`.
 */
export function publishRefused(
  subject: DecisionSubject,
  outcome: RefusalOutcome | undefined,
  at: { readonly now: number; readonly limiter: ConcurrencyLimit | undefined },
): void {
  const queuedAt = subject.queuedAt;
  const limiter = at.limiter;
  admissionChannel.publish(
    withKey(
      {
        result: outcome === undefined ? 'abandoned' : outcome.refusal.reason,
        route: subject.route,
        criticality: subject.criticality,
        attempt: subject.attempt,
        queued: queuedAt !== undefined,
        waitMs: queuedAt === undefined ? 0 : Math.max(0, at.now - queuedAt),
        status: outcome?.response.status,
        signal: outcome?.response.signal,
        retryAfterMs: outcome?.refusal.retryAfterMs,
        capacityFree:
          outcome !== undefined &&
          (limiter === undefined || (limiter.active < limiter.limit && limiter.queued === 0)),
        req: subject.req,
        seq: 0,
      },
      subject.key,
    ),
  );
}

/** Publishes a quota decision for a request on `route`. */
export function publishQuota(
  d: RateDecision,
  subject: { readonly route: string; readonly req: IncomingMessage },
  key: string | undefined,
): void {
  const message = {
    route: subject.route,
    result: d.ok ? 'allowed' : d.reason === undefined ? 'quota' : 'unavailable',
    degraded: d.degraded === true,
    retryAfterMs: d.ok ? undefined : d.retryAfterMs,
    req: subject.req,
  } as const;
  quotaChannel.publish(key === undefined ? message : { ...message, key });
}

/** Publishes that an admitted request gave its slot back, at `now`. */
export function publishRelease(context: Admitted, outcome: PermitOutcome, now: number): void {
  releaseChannel.publish({
    route: context.route,
    criticality: context.criticality,
    heldMs: Math.max(0, now - context.grantedAt),
    outcome,
    req: context.req,
    seq: context.admissionSeq,
  });
}

function withKey(message: AdmissionMessage, key: string | undefined): AdmissionMessage {
  return key === undefined ? message : { ...message, key };
}
