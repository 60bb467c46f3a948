/**
 * A route's per-client quota: one or several policies, every one of which must admit a request.
 *
 * Policies in memory (the default) are decided together, at once: each client has one entry
 * in an LRU-bounded map holding a bucket per policy and the client's numbers, so a request is
 * one lookup and one clock read however many policies there are, and a request one policy
 * refuses takes nothing from the others. Policies in a store (Redis) are asked after the
 * memory ones admit, all at once; if a store refuses, the memory policies get their token back
 * (exactly: a bucket refills linearly up to its cap), and so do the stores that admitted, by
 * the store's own `adjust` — one more call, not atomic with the take: until it lands, and for
 * good if it fails or the store has no `adjust`, the refused request holds one token of each
 * such policy (docs/http.md, "Several policies").
 *
 * A client's numbers from functions are asked once per key and kept in its entry for
 * `refreshLimitsMs`; an entry evicted by the `maxKeys` bound takes them with it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock, RateDecision, RateStore } from '../index.js';
import { LruMap } from '../core/internal/lru-map.js';
import type { QuotaFields } from '../http/index.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import { AllowList } from './quota-allow.js';
import { setKnownField } from './set-known-field.js';
import { refill, takeLocal, type ClientState } from './quota-buckets.js';
import { LimitsSource, type Limits } from './quota-limits.js';
import type { QuotaSpec } from './quota-options.js';
import {
  none,
  verdictInput,
  verdictOf,
  type QuotaVerdict,
  type RateLimitHeaders,
  type VerdictInput,
} from './quota-verdict.js';

export type { QuotaVerdict, RateLimitHeaders } from './quota-verdict.js';

/** One client's place in a route's quota, for key management (see `RouteQuota.keyEntry`). */
export interface QuotaKeyEntry {
  /** The policies' names, in order. */
  readonly names: readonly string[];
  /** The client's numbers: fixed, or as asked at its last request; undefined if never asked. */
  readonly limits: Limits | undefined;
  /** Per policy, its store; undefined for a memory policy. */
  readonly stores: readonly (RateStore | undefined)[];
  readonly clock: Clock;
  /** Its memory buckets; with `create`, full ones made if it has none and its numbers are known. */
  state(create: boolean): ClientState | undefined;
  /** Drops its memory buckets (full again at its next request). */
  forget(): void;
}

const ignore = (): void => undefined;

/** A route's quota, built from its checked options. */
export class RouteQuota {
  /** The policies' names, in order. */
  readonly names: readonly string[];
  /** Whether `skip` or `allow` may let a request bypass the quota. */
  readonly mayBypass: boolean;
  /** What every verdict is formatted by: where the fields go, which policies are remote. */
  readonly #shape: VerdictInput;
  readonly #clock: Clock;
  readonly #source: LimitsSource;
  readonly #refreshMs: number;
  /** Per policy, its store; undefined for a memory policy. */
  readonly #stores: readonly (RateStore | undefined)[];
  readonly #anyStore: boolean;
  readonly #anyLocal: boolean;
  /** Clients' state; undefined when there is none to keep (fixed numbers, every policy remote). */
  readonly #clients: LruMap<ClientState> | undefined;
  readonly #skip: ((req: IncomingMessage) => boolean) | undefined;
  readonly #allow: AllowList | undefined;

  constructor(
    spec: QuotaSpec,
    settings: { readonly route: string; readonly clock: Clock; readonly headers: RateLimitHeaders },
  ) {
    this.names = spec.policies.map((p) => p.name);
    this.#clock = settings.clock;
    this.#source = new LimitsSource(spec, settings.route);
    this.#refreshMs = spec.refreshLimitsMs;
    this.#stores = spec.policies.map((p) => p.store);
    this.#shape = verdictInput({ headers: settings.headers, stores: this.#stores });
    this.#anyStore = this.#stores.some((s) => s !== undefined);
    this.#anyLocal = this.#stores.some((s) => s === undefined);
    this.#clients =
      this.#anyLocal || spec.perClient ? new LruMap<ClientState>(spec.maxKeys) : undefined;
    this.#skip = spec.skip;
    this.#allow =
      spec.allow.length === 0
        ? undefined
        : new AllowList(spec.allow, `${settings.route}.quota.allow`);
    this.mayBypass = this.#skip !== undefined || this.#allow !== undefined;
  }

  /** Whether `skip` or `allow` lets this request through without asking the quota. */
  bypass(req: IncomingMessage, keyOf: () => string, trustProxy: TrustProxy): boolean {
    if (this.#skip?.(req) === true) return true;
    const allow = this.#allow;
    if (allow === undefined) return false;
    if (allow.hasKey(keyOf())) return true;
    return allow.hasRanges && allow.covers(clientAddress(req, trustProxy));
  }

  /**
   * What key management (`quota-keys.ts`) works on for `key`: its numbers if known (fixed, or
   * asked at its last request), each policy's store, and its memory buckets.
   */
  keyEntry(key: string): QuotaKeyEntry {
    const clients = this.#clients;
    const state = clients?.peek(key);
    const limits = state?.limits ?? this.#source.fixed;
    return {
      names: this.names,
      limits,
      stores: this.#stores,
      clock: this.#clock,
      state: (create) => {
        if (state !== undefined || !create || clients === undefined || limits === undefined) {
          return state;
        }
        const made = {
          limits,
          refreshAt: Infinity,
          at: this.#clock.now(),
          tokens: [...limits.burst],
        };
        clients.set(key, made);
        return made;
      },
      forget: () => void clients?.delete(key),
    };
  }

  /** Takes one request's token from every policy, or from none; what user code throws, throws. */
  decide(key: string, req: IncomingMessage): QuotaVerdict | Promise<QuotaVerdict> {
    const now = this.#clock.now();
    const state = this.#stateOf(key, req, now);
    const limits = state?.limits ?? this.#source.fixed!;
    if (state !== undefined && this.#anyLocal) {
      const refused = takeLocal(state, now, this.#stores);
      if (refused !== undefined)
        return verdictOf(limits, state, verdictInput(this.#shape, { refused }));
    }
    if (!this.#anyStore) return verdictOf(limits, state, this.#shape);
    return this.#askStores(key, limits, state);
  }

  /** The client's state, its numbers asked when it is new or they are due again. */
  #stateOf(key: string, req: IncomingMessage, now: number): ClientState | undefined {
    const clients = this.#clients;
    if (clients === undefined) return undefined;
    let state = clients.get(key);
    if (state === undefined) {
      const limits = this.#source.of(key, req);
      state = { limits, refreshAt: this.#refreshAt(now), at: now, tokens: [...limits.burst] };
      clients.set(key, state);
    } else if (now >= state.refreshAt) {
      const limits = this.#source.of(key, req, state.limits);
      if (limits !== state.limits) {
        // Up to date under the old numbers, then held to the new sizes.
        refill(state, now, this.#stores);
        for (let i = 0; i < limits.burst.length; i++) {
          state.tokens[i] = Math.min(state.tokens[i]!, limits.burst[i]!);
        }
        state.limits = limits;
      }
      state.refreshAt = this.#refreshAt(now);
    }
    return state;
  }

  #refreshAt(now: number): number {
    return this.#source.fixed === undefined ? now + this.#refreshMs : Infinity;
  }

  /** Asks the store policies at once, after the memory ones admitted. */
  #askStores(
    key: string,
    limits: Limits,
    state: ClientState | undefined,
  ): QuotaVerdict | Promise<QuotaVerdict> {
    const stores = this.#stores;
    const answers: (RateDecision | PromiseLike<RateDecision> | undefined)[] = [];
    let pending = false;
    try {
      for (let i = 0; i < stores.length; i++) {
        const d = stores[i]?.take(key, 1, limits.policies[i]!);
        answers.push(d);
        if (d !== undefined && 'then' in d) pending = true;
      }
    } catch (error) {
      this.#giveBack(key, state);
      throw error;
    }
    if (!pending) return this.#settle(key, limits, { state, answers: answers as RateDecision[] });
    // A remote store answers in a round trip: a promise per answer costs nothing beside it.
    return Promise.all(answers.map((a) => Promise.resolve(a))).then(
      (decided) => this.#settle(key, limits, { state, answers: decided }),
      (error: unknown) => {
        this.#giveBack(key, state);
        throw error;
      },
    );
  }

  /** The verdict once the stores answered; memory tokens go back if any store refused. */
  #settle(
    key: string,
    limits: Limits,
    at: { state: ClientState | undefined; answers: readonly (RateDecision | undefined)[] },
  ): QuotaVerdict {
    let mask = 0;
    let wait = 0;
    let closed: Extract<RateDecision, { ok: false }> | undefined;
    let degraded = false;
    for (let i = 0; i < at.answers.length; i++) {
      const d = at.answers[i];
      if (d === undefined) continue;
      if (d.degraded === true) degraded = true;
      if (d.ok) continue;
      if (d.reason !== undefined) closed ??= d;
      else {
        mask |= 1 << i;
        if (d.retryAfterMs > wait) wait = d.retryAfterMs;
      }
    }
    if (mask === 0 && closed === undefined) {
      return verdictOf(
        limits,
        at.state,
        verdictInput(this.#shape, { answers: at.answers, degraded }),
      );
    }
    this.#giveBack(key, at.state);
    const answers = this.#giveBackStores(key, limits, at.answers);
    // The client's own quota is what it must honour; a store that is down is not its fault.
    if (mask === 0) {
      // Every field named (a spread costs a runtime call): the store's answer, no fields.
      const c = closed!;
      return {
        ok: false,
        remaining: 0,
        retryAfterMs: c.retryAfterMs,
        limit: c.limit,
        resetMs: c.resetMs,
        reason: c.reason!,
        degraded,
        policy: undefined,
        now: undefined,
        violated: none,
      };
    }
    const refused = { mask, wait };
    return verdictOf(limits, at.state, verdictInput(this.#shape, { answers, refused, degraded }));
  }

  /**
   * Gives back the tokens the stores that admitted took for a refused request (a store without
   * `adjust` keeps its token; a failed refund is dropped: the request is answered regardless).
   * Returns the answers as they stand once the tokens are back.
   */
  #giveBackStores(
    key: string,
    limits: Limits,
    answers: readonly (RateDecision | undefined)[],
  ): readonly (RateDecision | undefined)[] {
    return answers.map((d, i) => {
      const store = this.#stores[i];
      // A degraded admission (the store down, the policy open) took nothing.
      if (d === undefined || !d.ok || d.degraded === true || store?.adjust === undefined) return d;
      let done: ReturnType<typeof store.adjust>;
      try {
        done = store.adjust(key, 1, limits.policies[i]!);
      } catch {
        return d;
      }
      if (!('then' in done)) {
        return { ok: true, remaining: done.remaining, limit: d.limit, resetMs: done.resetMs };
      }
      done.then(undefined, ignore);
      // On its way: the bucket as it will be, one token's refill nearer full.
      const tokenMs = 1 / limits.ratePerMs[i]!;
      return {
        ok: true,
        remaining: Math.min(d.limit, d.remaining + 1),
        limit: d.limit,
        resetMs: Math.max(0, Math.ceil(d.resetMs - tokenMs)),
      };
    });
  }

  /** Gives a refused request's memory tokens back, unless the client's entry has gone since. */
  #giveBack(key: string, state: ClientState | undefined): void {
    if (state === undefined || !this.#anyLocal || this.#clients!.peek(key) !== state) return;
    const { tokens, limits } = state;
    for (let i = 0; i < tokens.length; i++) {
      if (this.#stores[i] === undefined) tokens[i] = Math.min(limits.burst[i]!, tokens[i]! + 1);
    }
  }
}

/**
 * Sets the RateLimit fields of an admitted request's response (the route sends them always).
 * Both were built here, from names made printable ASCII and whole numbers: valid as they are.
 */
export function setRateLimitFields(res: ServerResponse, fields: QuotaFields): void {
  setKnownField(res, 'ratelimit-policy', fields.policy!);
  setKnownField(res, 'ratelimit', fields.now!);
}
