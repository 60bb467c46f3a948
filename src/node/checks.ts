/**
 * Admission's checks for one request, cheapest first and all before the body is read: exempt
 * route → penalty box → spent deadline → per-client quota (429) → criticality shedding →
 * per-route concurrency with a time-bounded line (503). Each check passes the request on or
 * refuses it with one `Refusal` value; what a core limit refuses with is worded by
 * `refusalOfRejection`, and the refusal step builds the response once and publishes it. The
 * checks that see the whole process (event loop, memory, `maxInFlight`) are `process-checks.ts`.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { criticalities, criticalityRank, type Permit, type PermitOutcome } from '../index.js';
import {
  parseAttempt,
  parseCriticality,
  parseDeadlineMs,
  refusalResponse,
  type Refusal,
} from '../http/index.js';
import { refusalOfRejection } from '../http/refusal-of-rejection.js';
import type { GuardSettings } from './admission-options.js';
import { exemptResult, gone, type AdmitResult } from './admit-result.js';
import {
  admissionChannel,
  queuedChannel,
  quotaChannel,
  releaseChannel,
} from '../channels/channels.js';
import { clientAddress, clientKey } from './client-address.js';
import {
  publishAdmitted,
  publishQuota,
  publishRefused,
  publishRelease,
  lineSubject,
  type RefusalOutcome,
} from './decision-messages.js';
import { publishRefusal, refusalChannel, type RefusalSubject } from './refusal-channel.js';
import { ProcessChecks, processOverloaded } from './process-checks.js';
import { Admitted, clientGone, type ContextInit } from './request-context.js';
import { inStorm } from './storm-signal.js';
import { requestFields } from './request-fields.js';
import type { Route, RouteTable } from './route.js';
import { setRateLimitFields, type QuotaVerdict } from './route-quota.js';
import { waitInLine, type Landing, type Rejection } from './wait-in-line.js';

/** A request between checks; fields are filled in as the checks need them. */
interface Arrival {
  readonly route: Route;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  key: string | undefined;
  /** `Spillway-Deadline` as asked, in ms. */
  askedMs: number | undefined;
  /** The criticality's rank; -1 until it is read. */
  rank: number;
  attempt: number;
  /** When the request arrived on the guard's clock, if it was needed before admission. */
  arrivedAt: number | undefined;
  /** The quota's admission, when its RateLimit fields go on the response. */
  quota: QuotaVerdict | undefined;
}

/** What a context starts from, with the quota's fields to set once admitted. */
interface AdmissionInit extends ContextInit {
  readonly quota: QuotaVerdict | undefined;
}

/** The checks, over a guard's settings and routes; counts the requests it let through. */
export class Checks implements Landing<AdmitResult> {
  readonly #s: GuardSettings;
  readonly #routes: RouteTable;
  // The settings every request reads, held here: one load each on the refusal path.
  readonly #exempt: ReadonlySet<string>;
  readonly #box: GuardSettings['box'];
  readonly #names: GuardSettings['headerNames'];
  readonly #signal: GuardSettings['capacitySignal'];
  readonly #process: ProcessChecks;
  readonly #onFinish = (context: Admitted, outcome: PermitOutcome): void => {
    this.#process.finished(context.startedAt);
    if (releaseChannel.hasSubscribers) publishRelease(context, outcome, this.#s.clock.now());
  };

  /** {@link #onFinish} on a route whose keys hold shares of its slots: the key's slot back too. */
  readonly #onFinishShared = (context: Admitted, outcome: PermitOutcome): void => {
    this.#onFinish(context, outcome);
    this.#routes.byName(context.route)?.tenants?.give(context.key);
  };

  constructor(settings: GuardSettings, routes: RouteTable) {
    this.#s = settings;
    this.#routes = routes;
    this.#exempt = settings.exempt;
    this.#box = settings.box;
    this.#names = settings.headerNames;
    this.#signal = settings.capacitySignal;
    this.#process = new ProcessChecks(settings);
  }

  /** Admitted requests not yet finished, across routes. */
  get inflight(): number {
    return this.#process.inflight;
  }

  /** Decides for one request; throws (or rejects) only what user code threw. */
  decide(
    req: IncomingMessage,
    res: ServerResponse,
    routeName: string | undefined,
  ): AdmitResult | Promise<AdmitResult> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    // A route the caller named (a framework adapter's) is never exempt by path.
    if (routeName === undefined && this.#exempt.has(path)) return exemptResult;
    const route =
      (routeName === undefined ? undefined : this.#routes.byName(routeName)) ??
      this.#routes.resolve(req, path);
    if (route.exempt) return exemptResult;

    // The client key (a socket lookup, or the user's function) and the clock are read only
    // when something needs them: a refusal for capacity needs neither.
    const p: Arrival = {
      route,
      req,
      res,
      key: undefined,
      askedMs: undefined,
      rank: -1,
      attempt: 1,
      arrivedAt: undefined,
      quota: undefined,
    };
    const box = this.#box;
    if (box !== undefined) {
      const verdict = box.check(this.#keyFor(p), req);
      if (verdict !== undefined) {
        return this.#refuse(refusalOfRejection(verdict)!, p, verdict.closeConnection);
      }
    }

    const fields = requestFields(req, this.#names);
    const askedMs = parseDeadlineMs(fields.deadline);
    if (askedMs === 0) return this.#refuse(spentDeadline, p);
    p.askedMs = askedMs;
    const claimed = parseCriticality(fields.criticality);
    if (claimed === undefined) p.rank = criticalityRank(route.defaultCriticality);
    else {
      // A client never raises itself above the route's ceiling.
      const rank = criticalityRank(claimed);
      p.rank = rank < route.ceilingRank ? route.ceilingRank : rank;
    }
    p.attempt = parseAttempt(fields.attempt) ?? 1;
    const quota = route.quota;
    if (quota === undefined) return this.#acquire(p);
    // `skip` and `allow` let a request by without asking the quota or its stores.
    if (quota.mayBypass && quota.bypass(req, () => this.#keyFor(p), this.#s.trustProxy)) {
      return this.#acquire(p);
    }
    const decision = quota.decide(this.#keyFor(p), req);
    if (!('then' in decision)) return this.#afterQuota(decision, p);
    // The deadline counts from arrival, not from when a remote store answered (and a set
    // `arrivedAt` tells the next step the client may have left in the meantime).
    p.arrivedAt = this.#s.clock.now();
    return Promise.resolve(decision).then((d) => this.#afterQuota(d, p));
  }

  #afterQuota(d: QuotaVerdict, p: Arrival): AdmitResult | Promise<AdmitResult> {
    if (quotaChannel.hasSubscribers)
      publishQuota(d, { route: p.route.name, req: p.req }, this.#published(p));
    if (d.ok) {
      if (d.policy !== undefined) p.quota = d;
      return this.#acquire(p);
    }
    // Only the client's own quota is a refusal it must honour (a store that is down is not).
    const own = d.reason === undefined;
    if (own) this.#box?.refused(this.#keyFor(p), d.retryAfterMs);
    return this.#refuse(refusalOfRejection(d, this.#signal, own ? d : undefined)!, p);
  }

  #acquire(p: Arrival): AdmitResult | Promise<AdmitResult> {
    const { route, rank } = p;
    // After an asynchronous step its `close` has come and gone: no slot, no line for it.
    if (p.arrivedAt !== undefined && clientGone(p.res)) return this.#abandoned(p);
    // What competes for the route's capacity is counted (a client's quota refusals are not).
    // Its arrival time is the one the context starts from, if it is admitted.
    route.storm?.record(p.attempt, (p.arrivedAt ??= this.#s.clock.now()));
    const criticality = criticalities[rank]!;
    const proc = this.#process;
    if (proc.sheds(criticality)) return this.#refuse(processOverloaded, p);
    const limiter = route.limiter;
    if (limiter === undefined) {
      if (proc.full) return this.#refuse(processOverloaded, p);
      return this.#admitted(new Admitted(this.#init(p)).start(undefined), p.quota);
    }
    const tenants = route.tenants;
    if (tenants !== undefined && !tenants.mayTake(this.#keyFor(p), limiter, limiter.queued)) {
      return this.#refuse(overShare, p);
    }
    const now = limiter.tryAcquire();
    if (now.ok) {
      // The process-wide cap, after the route's own: its permit goes back if the process is full.
      if (proc.full) {
        now.permit.release('ignored');
        return this.#refuse(processOverloaded, p);
      }
      return this.#start(p, now.permit);
    }
    // At the door a limit's refusal is never `aborted`: there is always something to write.
    if (route.maxQueue === 0) return this.#refuse(refusalOfRejection(now, this.#signal)!, p);
    const allowance = route.lineAllowance[rank]!;
    if (allowance < route.maxQueue && limiter.queued >= allowance) {
      // This criticality's share of the line is used up: shed it, keep room for more critical work.
      return this.#refuse({ reason: 'shed', retryAfterMs: now.retryAfterMs }, p);
    }
    // A full line with nobody to displace: refuse now, allocating nothing for the wait.
    if (!limiter.hasRoom(criticality))
      return this.#refuse(refusalOfRejection(now, this.#signal)!, p);
    const init = this.#init(p);
    if (queuedChannel.hasSubscribers)
      queuedChannel.publish({ route: route.name, criticality, req: p.req });
    return waitInLine(limiter, init, this);
  }

  /** Where a wait in line lands with a slot (see `waitInLine`). */
  admit(init: ContextInit, permit: Permit): AdmitResult {
    if (this.#process.full) {
      permit.release('ignored');
      return this.#refuse(processOverloaded, init);
    }
    const route =
      init.onFinish === this.#onFinishShared ? this.#routes.byName(init.route) : undefined;
    const tenants = route?.tenants;
    if (tenants !== undefined) {
      // Its turn came, but its key took its share while it waited: the slot goes to the next.
      if (!tenants.mayTake(init.key, route!.limiter!, route!.limiter!.queued)) {
        permit.release('ignored');
        return this.#refuse(overShare, init);
      }
      tenants.take(init.key);
    }
    const fields = (init as AdmissionInit).quota;
    return this.#admitted(new Admitted(init).start(permit), fields, true);
  }

  /** Where a wait in line lands without one; nothing to write if the client left. */
  refuse(init: ContextInit, rejection: Rejection): AdmitResult {
    const refusal = refusalOfRejection(rejection, this.#signal);
    return refusal === undefined ? this.#abandoned(init) : this.#refuse(refusal, init);
  }

  /** Starts a context on a permit just taken, giving the permit back if that fails. */
  #start(p: Arrival, permit: Permit): AdmitResult {
    let init: ContextInit;
    try {
      // Built after the permit, so a capacity refusal never pays for the key (nor the clock,
      // unless the route counts arrivals for the retry-storm signal: then it was read already).
      init = this.#init(p);
    } catch (error) {
      permit.release('ignored');
      throw error;
    }
    p.route.tenants?.take(init.key);
    return this.#admitted(new Admitted(init).start(permit), p.quota);
  }

  /** What an admitted (or waiting) request's context starts from. */
  #init(p: Arrival): AdmissionInit {
    const now = p.arrivedAt ?? this.#s.clock.now();
    const route = p.route;
    const asked = p.askedMs;
    const routeExpiresAt = now + route.deadlineMs;
    return {
      clock: this.#s.clock,
      expiresAt: asked !== undefined && asked < route.deadlineMs ? now + asked : routeExpiresAt,
      routeExpiresAt,
      criticality: criticalities[p.rank]!,
      attempt: p.attempt,
      key: this.#keyFor(p),
      route: route.name,
      req: p.req,
      res: p.res,
      startedAt: now,
      publishKey: this.#s.publishKey,
      onFinish: route.tenants === undefined ? this.#onFinish : this.#onFinishShared,
      quota: p.quota,
    };
  }

  /**
   * Counts a request let through (after a wait in line when `queued`), and publishes it; sets
   * the quota's RateLimit fields on its response when the route sends them always.
   */
  #admitted(context: Admitted, quota: QuotaVerdict | undefined, queued = false): AdmitResult {
    if (quota !== undefined) setRateLimitFields(context.res, quota);
    this.#process.started();
    if (admissionChannel.hasSubscribers) {
      publishAdmitted(context, queued ? context.grantedAt - context.startedAt : undefined);
    }
    return { admitted: true, context, exempt: false };
  }

  /** A client that left before it was decided for: nothing to write, but it is published. */
  #abandoned(about: Arrival | ContextInit): AdmitResult {
    if (admissionChannel.hasSubscribers) this.#publishDecision(about, undefined);
    return gone;
  }

  /** The client key of the request, worked out once. */
  #keyFor(p: Arrival): string {
    if (p.key !== undefined) return p.key;
    const custom = this.#s.key;
    if (custom !== undefined) {
      const k = custom(p.req);
      if (typeof k === 'string' && k.length > 0 && k.length <= 256) return (p.key = k);
    }
    return (p.key = clientKey(clientAddress(p.req, this.#s.trustProxy), this.#s.ipv6Prefix));
  }

  /**
   * The refusal step: the response, built once, and published if anyone listens. `about` is
   * the request, or, after a wait in line, what its context was to start from.
   */
  #refuse(refusal: Refusal, about: Arrival | ContextInit, closeConnection = false): AdmitResult {
    // In a retry storm a refusal for load says `never`; a client over its share keeps `later`.
    if (this.#stormOf(about)?.active === true && refusal !== overShare) refusal = inStorm(refusal);
    const response = refusalResponse(refusal, this.#names);
    if (refusalChannel.hasSubscribers) publishRefusal(refusal, response, this.#subjectOf(about));
    if (admissionChannel.hasSubscribers) this.#publishDecision(about, { refusal, response });
    this.#s.hooks?.refused(refusal, response, { about, keyOf: this.#keyOfAbout });
    return { admitted: false, refusal, response, closeConnection };
  }

  /** The retry-storm signal of the route `about` was decided on. */
  #stormOf(about: Arrival | ContextInit): Route['storm'] {
    const route = about.route;
    return typeof route === 'string' ? this.#routes.byName(route)?.storm : route.storm;
  }

  /** The key `onRefused` is told: the context's, or worked out now (it may throw). */
  readonly #keyOfAbout = (about: Arrival | ContextInit): string =>
    typeof about.route === 'string' ? (about as ContextInit).key : this.#keyFor(about as Arrival);

  /** Route and key for the refusal channel: watching never turns a refusal into a failure. */
  #subjectOf(about: Arrival | ContextInit): RefusalSubject {
    if (typeof about.route === 'string') return about as ContextInit;
    return { route: about.route.name, key: this.#published(about as Arrival), publishKey: true };
  }

  /** The key for a channel's message: only when the guard publishes keys, never a failure. */
  #published(p: Arrival): string | undefined {
    if (!this.#s.publishKey) return undefined;
    try {
      return this.#keyFor(p);
    } catch {
      return undefined;
    }
  }

  /** Publishes a refusal (or, without `outcome`, an abandoned request) on `spillway:admission`. */
  #publishDecision(about: Arrival | ContextInit, outcome: RefusalOutcome | undefined): void {
    const now = this.#s.clock.now();
    if (typeof about.route === 'string') {
      const init = about as ContextInit;
      const limiter = this.#routes.byName(init.route)?.limiter;
      publishRefused(lineSubject(init), outcome, { now, limiter });
      return;
    }
    const p = about as Arrival;
    const subject = {
      route: p.route.name,
      criticality: p.rank < 0 ? undefined : criticalities[p.rank],
      attempt: p.attempt,
      req: p.req,
      queuedAt: undefined,
      key: this.#published(p),
    };
    publishRefused(subject, outcome, { now, limiter: p.route.limiter });
  }
}

const spentDeadline: Refusal = Object.freeze({ reason: 'deadline' });
/** This client holds its share of the route's slots (`tenantShare`). */
const overShare: Refusal = Object.freeze({
  reason: 'capacity',
  retryAfterMs: 1_000,
  detail: "This client holds its share of the route's slots; others are served first.",
});
