/**
 * `redisStore`: the {@link RateStore} that shares quotas across replicas through a Redis the
 * user already runs. One key per limiter and client (`prefix:{name:id}:kind`), one atomic Lua
 * script per decision on Redis's own clock, a deadline per call enforced here, a cap on calls
 * in flight, a breaker, and an explicit answer when Redis cannot give one. Decisions never
 * reject: a failure becomes the failure policy's answer, marked `degraded: true`.
 *
 * @module
 */
import type { Clock } from '../core/clock/clock.js';
import { systemClock } from '../core/clock/clock.js';
import { SpillwayArgumentError } from '../core/errors/argument-error.js';
import { Emitter, type Event } from '../core/events/emitter.js';
import type { RateDecision, RatePolicy, RateStore } from '../core/rate-store/rate-store.js';
import { CallGate, isFailure, type CallFailure, type FailureKind } from './call-gate.js';
import { warnIfClientResends } from './client-warning.js';
import { RateFallback, type FailurePolicy } from './failure-policy.js';
import { redisKey, type KeyKind } from './keys.js';
import { DenyCache, LeaseTable } from './local-quota-cache.js';
import { scriptClient, type RedisClientLike } from './script-client.js';
import { fixedWindowScript, gcraScript, slidingWindowScript, type RedisScript } from './scripts.js';
import {
  clockLike,
  keyPrefix,
  nonNegativeInteger,
  oneOf,
  optionsObject,
  positiveInteger,
  positiveNumber,
} from './validate.js';

/** Which algorithm `take` runs. */
export type RateAlgorithm = 'gcra' | 'fixed-window' | 'sliding-window';

/** A window limit: at most `limit` per `windowMs`. */
export interface WindowPolicy {
  /** Names the limiter; part of every key. */
  readonly name: string;
  /** Most admissions per window. */
  readonly limit: number;
  /** Window length in ms (windows are aligned on Redis's clock). */
  readonly windowMs: number;
}

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /** An ioredis or node-redis client (or cluster) the application already has. Required. */
  readonly client: RedisClientLike;
  /** First part of every key (no braces). @default 'spillway' */
  readonly prefix?: string;
  /** Longest wait for one Redis call, in ms, enforced on `clock`. @default 100 */
  readonly timeoutMs?: number;
  /**
   * The answer when Redis cannot give one: `open` admits, `closed` refuses
   * (`reason: 'store-unavailable'`), `local` enforces limit ÷ `replicas` in memory.
   * @default 'open'
   */
  readonly onError?: FailurePolicy;
  /** Replicas sharing the limits (sizes `local` shares and lease batches). @default 1 */
  readonly replicas?: number;
  /** Most Redis calls waiting at once in this process; past it the policy answers. @default 1_000 */
  readonly maxInFlight?: number;
  /** Failed calls in a row that stop calling Redis for a cool-down. @default 5 */
  readonly breakerFailures?: number;
  /** Ms without calls before one probe checks Redis again. @default 250 */
  readonly breakerCooldownMs?: number;
  /**
   * Most lease releases and renewals waiting for the client to be ready again; past it the
   * oldest is dropped (its lease then expires by its TTL) and `onStoreError` says `dropped`.
   * @default 10_000
   */
  readonly cleanupMaxQueue?: number;
  /** What `take` runs; windows last `burst / ratePerSec` seconds. @default 'gcra' */
  readonly algorithm?: RateAlgorithm;
  /** Keys in the deny cache; 0 turns it off. @default 10_000 */
  readonly denyCacheMaxKeys?: number;
  /** Longest a cached refusal is trusted, in ms. @default 1_000 */
  readonly denyCacheMaxAgeMs?: number;
  /** Tokens a hot key may lease per round trip; 1 turns leasing off. @default 1 */
  readonly leaseMaxBatch?: number;
  /** Longest leased tokens are spent locally, in ms (bounds the overshoot). @default 50 */
  readonly leaseMaxHoldMs?: number;
  /** Keys kept by the lease table and by `local` fallback state. @default 10_000 */
  readonly maxKeys?: number;
  /** Where local time and timers come from (never used for limits). @default systemClock */
  readonly clock?: Clock;
}

/** Emitted once when decisions start coming from the failure policy. */
export interface DegradedEvent {
  readonly reason: FailureKind;
  readonly error?: unknown;
}

/** Emitted once when Redis answers again. */
export interface RecoveredEvent {
  /** How long decisions came from the failure policy. */
  readonly degradedMs: number;
}

/** Emitted for every call that produced no reply. */
export interface StoreErrorEvent {
  readonly reason: FailureKind;
  readonly error?: unknown;
}

/** Counters since creation. */
export interface RedisStoreStats {
  /** Scripts sent to Redis. */
  readonly calls: number;
  /** Refusals answered by the deny cache. */
  readonly denyCacheHits: number;
  /** Admissions answered from a local lease. */
  readonly leaseHits: number;
  /** Decisions answered by the failure policy. */
  readonly degraded: number;
  /** Lease releases and renewals dropped unsent because their queue was full. */
  readonly cleanupDropped: number;
}

/** A {@link RateStore} in Redis. */
export interface RedisStore extends RateStore<Promise<RateDecision>> {
  /** Token bucket (GCRA), or the configured `algorithm`, for `n` on `key`. Never rejects. */
  take(key: string, n: number, policy: RatePolicy): Promise<RateDecision>;
  /** Fixed window aligned on Redis time: exactly `limit` per window. Never rejects. */
  fixedWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision>;
  /** Sliding-window counter (approximate, two counts per key). Never rejects. */
  slidingWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision>;
  /** The configured failure policy. */
  readonly failurePolicy: FailurePolicy;
  /** True while decisions come from the failure policy. */
  readonly degraded: boolean;
  /** Redis calls waiting now. */
  readonly inFlight: number;
  /** Lease releases and renewals waiting now for the client to be ready again. */
  readonly cleanupQueued: number;
  /** `closed` (calling Redis), `open` (not calling), `probing`. */
  readonly breakerState: 'closed' | 'open' | 'probing';
  /** Counters since creation. */
  stats(): RedisStoreStats;
  readonly onDegraded: Event<DegradedEvent>;
  readonly onRecovered: Event<RecoveredEvent>;
  readonly onStoreError: Event<StoreErrorEvent>;
}

/** What the Redis concurrency limit shares with the store (not exported from the package). */
export interface StoreInternals {
  readonly gate: CallGate;
  readonly prefix: string;
  readonly clock: Clock;
  readonly policy: FailurePolicy;
  readonly replicas: number;
  readonly timeoutMs: number;
  /** Reports a call's outcome for degraded/recovered events and stats. */
  note(result: number[] | CallFailure): void;
}

const internals = new WeakMap<object, StoreInternals>();

/** The internals of a store made by {@link redisStore}; undefined for anything else. */
export function storeInternals(store: unknown): StoreInternals | undefined {
  return typeof store === 'object' && store !== null ? internals.get(store) : undefined;
}

const defaults = {
  prefix: 'spillway',
  timeoutMs: 100,
  onError: 'open',
  replicas: 1,
  maxInFlight: 1_000,
  breakerFailures: 5,
  breakerCooldownMs: 250,
  cleanupMaxQueue: 10_000,
  algorithm: 'gcra',
  denyCacheMaxKeys: 10_000,
  denyCacheMaxAgeMs: 1_000,
  leaseMaxBatch: 1,
  leaseMaxHoldMs: 50,
  maxKeys: 10_000,
} as const satisfies Partial<RedisStoreOptions>;

/**
 * Creates a Redis-backed store over a client you already have. Configure that client to fail
 * fast (ioredis: `enableOfflineQueue: false, maxRetriesPerRequest: 0`; node-redis:
 * `disableOfflineQueue: true`); the store's own deadline holds either way, and a client that
 * would queue or re-send commands gets a process warning (`SPILLWAY_W_REDIS_RESEND`) once.
 *
 * @example
 * const store = redisStore({ client: new Redis(), onError: 'local', replicas: 3 });
 * const perClient = keyedTokenBuckets({ ratePerSec: 10, burst: 20, store });
 * const d = await perClient.tryTake(clientId);
 */
export function redisStore(options: RedisStoreOptions): RedisStore {
  const o = optionsObject('redisStore options', options);
  const client = scriptClient('client', o.client);
  warnIfClientResends(o.client as object); // an object: scriptClient has checked it
  const clock = clockLike('clock', o.clock ?? systemClock);
  const policy = oneOf('onError', o.onError ?? defaults.onError, ['open', 'closed', 'local']);
  const replicas = positiveInteger('replicas', o.replicas ?? defaults.replicas);
  const maxKeys = positiveInteger('maxKeys', o.maxKeys ?? defaults.maxKeys);
  const denyKeys = nonNegativeInteger(
    'denyCacheMaxKeys',
    o.denyCacheMaxKeys ?? defaults.denyCacheMaxKeys,
  );
  const denyAge = positiveNumber(
    'denyCacheMaxAgeMs',
    o.denyCacheMaxAgeMs ?? defaults.denyCacheMaxAgeMs,
  );
  const maxBatch = positiveInteger('leaseMaxBatch', o.leaseMaxBatch ?? defaults.leaseMaxBatch);
  const maxHoldMs = positiveNumber('leaseMaxHoldMs', o.leaseMaxHoldMs ?? defaults.leaseMaxHoldMs);
  return new Store({
    client,
    clock,
    policy,
    replicas,
    prefix: keyPrefix('prefix', o.prefix ?? defaults.prefix),
    timeoutMs: positiveNumber('timeoutMs', o.timeoutMs ?? defaults.timeoutMs),
    maxInFlight: positiveInteger('maxInFlight', o.maxInFlight ?? defaults.maxInFlight),
    breakerFailures: positiveInteger(
      'breakerFailures',
      o.breakerFailures ?? defaults.breakerFailures,
    ),
    breakerCooldownMs: positiveNumber(
      'breakerCooldownMs',
      o.breakerCooldownMs ?? defaults.breakerCooldownMs,
    ),
    cleanupMaxQueue: positiveInteger(
      'cleanupMaxQueue',
      o.cleanupMaxQueue ?? defaults.cleanupMaxQueue,
    ),
    algorithm: oneOf('algorithm', o.algorithm ?? defaults.algorithm, [
      'gcra',
      'fixed-window',
      'sliding-window',
    ]),
    deny: denyKeys > 0 ? new DenyCache(denyKeys, denyAge) : undefined,
    leases: maxBatch > 1 ? new LeaseTable({ maxKeys, maxBatch, maxHoldMs, replicas }) : undefined,
    fallback: new RateFallback({ policy, replicas, clock, maxKeys }),
  });
}

interface Settings {
  readonly client: ReturnType<typeof scriptClient>;
  readonly clock: Clock;
  readonly policy: FailurePolicy;
  readonly replicas: number;
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly maxInFlight: number;
  readonly breakerFailures: number;
  readonly breakerCooldownMs: number;
  readonly cleanupMaxQueue: number;
  readonly algorithm: RateAlgorithm;
  readonly deny: DenyCache | undefined;
  readonly leases: LeaseTable | undefined;
  readonly fallback: RateFallback;
}

/** One decision's parameters, whichever the algorithm. */
interface Ask {
  readonly script: RedisScript;
  readonly kind: KeyKind;
  readonly name: string;
  /** GCRA: emission interval in µs; windows: window in ms (fractions kept). */
  readonly period: number;
  readonly limit: number;
  /** For the `local` fallback. */
  readonly ratePerSec: number;
}

/** `policy`, once its `windowMs` is a finite number of 1 or more (an argument error if not). */
function checkedWindow(policy: WindowPolicy): WindowPolicy {
  const windowMs = policy.windowMs;
  if (!(windowMs >= 1) || !Number.isFinite(windowMs)) {
    throw new SpillwayArgumentError('policy.windowMs', 'a finite number of 1 or more', windowMs);
  }
  return policy;
}

/** A window decision's parameters; the window goes to Redis as given, fractions included. */
function windowAsk(policy: WindowPolicy, fixed: boolean): Ask {
  const { name, limit, windowMs } = policy;
  return {
    script: fixed ? fixedWindowScript : slidingWindowScript,
    kind: fixed ? 'fw' : 'sw',
    name,
    period: windowMs,
    limit,
    ratePerSec: (limit * 1000) / windowMs,
  };
}

class Store implements RedisStore {
  readonly #s: Settings;
  readonly #gate: CallGate;
  readonly #clock: Clock;
  #degradedSince = -1;
  #calls = 0;
  #denyHits = 0;
  #leaseHits = 0;
  #degradedCount = 0;
  readonly #degradedE = new Emitter<DegradedEvent>();
  readonly #recoveredE = new Emitter<RecoveredEvent>();
  readonly #errorE = new Emitter<StoreErrorEvent>();
  readonly onDegraded = this.#degradedE.event;
  readonly onRecovered = this.#recoveredE.event;
  readonly onStoreError = this.#errorE.event;

  constructor(s: Settings) {
    this.#s = s;
    this.#clock = s.clock;
    this.#gate = new CallGate({
      client: s.client,
      clock: s.clock,
      timeoutMs: s.timeoutMs,
      maxInFlight: s.maxInFlight,
      breakerFailures: s.breakerFailures,
      breakerCooldownMs: s.breakerCooldownMs,
      cleanupMaxQueue: s.cleanupMaxQueue,
      onFailure: (f) => {
        if (this.#errorE.size > 0) this.#errorE.emit({ reason: f.failed, error: f.error });
      },
      onBreaker: () => {},
    });
    internals.set(this, {
      gate: this.#gate,
      prefix: s.prefix,
      clock: s.clock,
      policy: s.policy,
      replicas: s.replicas,
      timeoutMs: s.timeoutMs,
      note: (r) => this.#note(r),
    });
  }

  get failurePolicy(): FailurePolicy {
    return this.#s.policy;
  }

  get degraded(): boolean {
    return this.#degradedSince >= 0;
  }

  get inFlight(): number {
    return this.#gate.inFlight;
  }

  get cleanupQueued(): number {
    return this.#gate.cleanup.queued;
  }

  get breakerState(): 'closed' | 'open' | 'probing' {
    return this.#gate.breakerState;
  }

  stats(): RedisStoreStats {
    return {
      calls: this.#calls,
      denyCacheHits: this.#denyHits,
      leaseHits: this.#leaseHits,
      degraded: this.#degradedCount,
      cleanupDropped: this.#gate.cleanup.dropped,
    };
  }

  take(key: string, n: number, policy: RatePolicy): Promise<RateDecision> {
    const { name, ratePerSec, burst } = policy;
    const algorithm = this.#s.algorithm;
    if (algorithm === 'gcra') {
      return this.#decide(key, n, {
        script: gcraScript,
        kind: 'gcra',
        name,
        period: 1e6 / ratePerSec,
        limit: burst,
        ratePerSec,
      });
    }
    // Exactly burst / ratePerSec, never rounded up to whole ms: a longer window would refuse
    // a client at exactly ratePerSec. (At least a microsecond, Redis's clock resolution.)
    const windowMs = Math.max(0.001, (burst * 1000) / ratePerSec);
    const fixed = algorithm === 'fixed-window';
    return this.#decide(key, n, windowAsk({ name, limit: burst, windowMs }, fixed));
  }

  fixedWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision> {
    return this.#decide(key, n, windowAsk(checkedWindow(policy), true));
  }

  slidingWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision> {
    return this.#decide(key, n, windowAsk(checkedWindow(policy), false));
  }

  #decide(key: string, n: number, ask: Ask): Promise<RateDecision> {
    if (typeof key !== 'string') throw new SpillwayArgumentError('key', 'a string', key);
    const limit = ask.limit;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new SpillwayArgumentError('policy limit (burst)', 'a positive integer', limit);
    }
    if (!Number.isSafeInteger(n) || n < 1 || n > limit) {
      throw new SpillwayArgumentError('n', `an integer from 1 to ${limit}`, n);
    }
    const s = this.#s;
    const redisKeyName = redisKey(s.prefix, { name: ask.name, id: key }, ask.kind);
    // Local caches are keyed by the limit too, so a changed limit never meets old entries.
    const cacheKey = `${redisKeyName}\u0000${limit}\u0000${ask.period}`;
    const now = this.#clock.now();
    if (s.deny !== undefined) {
      const wait = s.deny.check(cacheKey, n, now);
      if (wait !== undefined) {
        this.#denyHits++;
        return Promise.resolve({
          ok: false,
          remaining: 0,
          retryAfterMs: wait,
          limit,
          resetMs: wait,
        });
      }
    }
    let want = n;
    const leases = s.leases;
    if (leases !== undefined) {
      const left = leases.spend(cacheKey, n, now);
      if (left >= 0) {
        this.#leaseHits++;
        return Promise.resolve({ ok: true, remaining: left, limit, resetMs: 0 });
      }
      want = leases.want(cacheKey, n, now);
    }
    this.#calls++;
    return this.#gate.callThen(
      ask.script,
      { keys: [redisKeyName], args: [String(ask.period), limit, n, want] },
      (r) => {
        this.#note(r);
        if (!isFailure(r)) return this.#answer(cacheKey, n, { ask, r, sentAt: now });
        this.#degradedCount++;
        return s.fallback.decide(key, n, {
          l: { kind: ask.kind, name: ask.name, limit, ratePerSec: ask.ratePerSec },
          retryAfterMs: this.#gate.breakerWaitMs() || s.breakerCooldownMs,
        });
      },
    );
  }

  #answer(
    cacheKey: string,
    n: number,
    at: { readonly ask: Ask; readonly r: number[]; readonly sentAt: number },
  ): RateDecision {
    const [granted = 0, remaining = 0, retry = -1, reset = 0] = at.r;
    const limit = at.ask.limit;
    const s = this.#s;
    if (granted >= n) {
      if (s.leases !== undefined) {
        const holdMs =
          at.ask.kind === 'fw' ? Math.min(s.leases.maxHoldMs, reset) : s.leases.maxHoldMs;
        s.leases.grant(
          cacheKey,
          { granted, n, remote: remaining },
          {
            now: at.sentAt,
            expiresAt: at.sentAt + holdMs,
          },
        );
      }
      return { ok: true, remaining: remaining + granted - n, limit, resetMs: reset };
    }
    const retryAfterMs = retry < 1 ? 1 : retry;
    s.deny?.remember(cacheKey, n, { sentAt: at.sentAt, retryAfterMs });
    s.leases?.asked(cacheKey, at.sentAt);
    return { ok: false, remaining: 0, retryAfterMs, limit, resetMs: reset };
  }

  #note(r: number[] | CallFailure): void {
    if (isFailure(r)) {
      if (this.#degradedSince < 0) {
        this.#degradedSince = this.#clock.now();
        if (this.#degradedE.size > 0) this.#degradedE.emit({ reason: r.failed, error: r.error });
      }
    } else if (this.#degradedSince >= 0) {
      const degradedMs = this.#clock.now() - this.#degradedSince;
      this.#degradedSince = -1;
      if (this.#recoveredE.size > 0) this.#recoveredE.emit({ degradedMs });
    }
  }
}
