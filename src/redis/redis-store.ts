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
import { Emitter, type Event } from '../core/events/emitter.js';
import type {
  RateDecision,
  RateKeyState,
  RatePolicy,
  RateStore,
} from '../core/rate-store/rate-store.js';
import { storeDegradedChannel, storeRecoveredChannel } from '../channels/channels.js';
import { CallGate, isFailure, type CallFailure, type FailureKind } from './call-gate.js';
import type { FailurePolicy } from './failure-policy.js';
import { KeyManager } from './key-manager.js';
import { AskMemo } from './ask-memo.js';
import type { WindowPolicy } from './rate-ask.js';
import { RateDecider } from './rate-decider.js';
import {
  storeSettings,
  type RedisStoreOptions,
  type StoreSettings,
} from './redis-store-options.js';
import { shareInternals } from './store-internals.js';

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
  /**
   * `key`'s bucket under `policy` (what `take` uses), changing nothing. Key management needs
   * Redis: it rejects with `StoreUnavailableError` when Redis cannot be asked.
   */
  peek(key: string, policy: RatePolicy): Promise<RateKeyState>;
  /** Forgets `key` under `policy`: full again on every replica. */
  reset(key: string, policy: RatePolicy): Promise<void>;
  /**
   * Adds `tokens` to `key`'s bucket (negative: takes them, leaving a debt if need be; never
   * above `burst`). Under the window algorithms it moves the current window's count.
   */
  adjust(key: string, tokens: number, policy: RatePolicy): Promise<RateKeyState>;
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
  return new Store(storeSettings(options));
}

class Store implements RedisStore {
  readonly #s: StoreSettings;
  readonly #gate: CallGate;
  readonly #clock: Clock;
  readonly #decider: RateDecider;
  readonly #keys: KeyManager;
  readonly #asks: AskMemo;
  #degradedSince = -1;
  readonly #degradedE = new Emitter<DegradedEvent>();
  readonly #recoveredE = new Emitter<RecoveredEvent>();
  readonly #errorE = new Emitter<StoreErrorEvent>();
  readonly onDegraded = this.#degradedE.event;
  readonly onRecovered = this.#recoveredE.event;
  readonly onStoreError = this.#errorE.event;

  constructor(s: StoreSettings) {
    this.#s = s;
    this.#clock = s.clock;
    this.#gate = new CallGate({
      client: s.client,
      clock: s.clock,
      timeoutMs: s.timeoutMs,
      maxInFlight: s.maxInFlight,
      maxBatch: s.maxBatchItems,
      breakerFailures: s.breakerFailures,
      breakerCooldownMs: s.breakerCooldownMs,
      cleanupMaxQueue: s.cleanupMaxQueue,
      onFailure: (f) => {
        if (this.#errorE.size > 0) this.#errorE.emit({ reason: f.failed, error: f.error });
      },
      onBreaker: () => {},
    });
    this.#decider = new RateDecider(s, this.#gate, (r) => this.#note(r));
    this.#keys = new KeyManager(s, this.#gate, (r) => this.#note(r));
    this.#asks = new AskMemo(s.prefix, s.algorithm);
    shareInternals(this, {
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
    return { ...this.#decider.counts(), cleanupDropped: this.#gate.cleanup.dropped };
  }

  take(key: string, n: number, policy: RatePolicy): Promise<RateDecision> {
    return this.#decider.decide(key, n, this.#asks.take(policy));
  }

  peek(key: string, policy: RatePolicy): Promise<RateKeyState> {
    return this.#keys.peek(key, this.#asks.take(policy));
  }

  reset(key: string, policy: RatePolicy): Promise<void> {
    return this.#keys.reset(key, this.#asks.take(policy));
  }

  adjust(key: string, tokens: number, policy: RatePolicy): Promise<RateKeyState> {
    return this.#keys.adjust(key, tokens, this.#asks.take(policy));
  }

  fixedWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision> {
    return this.#decider.decide(key, n, this.#asks.window(policy, true));
  }

  slidingWindow(key: string, n: number, policy: WindowPolicy): Promise<RateDecision> {
    return this.#decider.decide(key, n, this.#asks.window(policy, false));
  }

  #note(r: number[] | CallFailure): void {
    if (isFailure(r)) {
      if (this.#degradedSince < 0) {
        this.#degradedSince = this.#clock.now();
        if (this.#degradedE.size > 0) this.#degradedE.emit({ reason: r.failed, error: r.error });
        if (storeDegradedChannel.hasSubscribers) {
          storeDegradedChannel.publish({ policy: this.#s.policy, reason: r.failed });
        }
      }
    } else if (this.#degradedSince >= 0) {
      const degradedMs = this.#clock.now() - this.#degradedSince;
      this.#degradedSince = -1;
      if (this.#recoveredE.size > 0) this.#recoveredE.emit({ degradedMs });
      if (storeRecoveredChannel.hasSubscribers) {
        storeRecoveredChannel.publish({ policy: this.#s.policy, degradedMs });
      }
    }
  }
}
