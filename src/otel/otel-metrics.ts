/**
 * `otelMetrics`: OpenTelemetry metrics built from Spillway's diagnostics channels and nothing
 * else — no counter of its own beside the decisions, so what a dashboard shows is what the
 * guard and the client decided. Subscribing is what turns the publishers on; closing turns
 * them off again (an unobserved guard builds no message). The limits, retry budgets and
 * breaker states are read when the SDK collects, from the guards and dependencies given.
 *
 * @module
 */
import {
  metrics,
  type Attributes,
  type BatchObservableResult,
  type MeterProvider,
} from '@opentelemetry/api';
import { SpillwayConfigError } from '../index.js';
import {
  admissionChannel,
  admissionsPublished,
  attemptChannel,
  queuedChannel,
  quotaChannel,
  releaseChannel,
  type AdmissionMessage,
  type AttemptMessage,
  type QueuedMessage,
  type QuotaMessage,
  type ReleaseMessage,
} from '../channels/channels.js';
import type { Admission } from '../node/index.js';
import type { Dependency } from '../client/index.js';
import { attributeNames as a, circuitStates, createInstruments } from './instruments.js';
import { PendingSums } from './pending-sums.js';
import { PendingValues } from './pending-values.js';
import { Subscriptions } from './subscriptions.js';

/** A guard whose routes' limits `spillway.limit` reports (an `admission()`, Express's `.admission`, `fastify.spillway`). */
export type ObservedGuard = Pick<Admission, 'routeNames' | 'stats'>;

/** A dependency whose cap, retry budget and breaker are reported. */
export type ObservedDependency = Pick<Dependency, 'name' | 'budget' | 'breaker' | 'limiter'>;

/** Options of {@link otelMetrics}. */
export interface OtelMetricsOptions {
  /** Where the instruments are made. @default the global one (`metrics.getMeterProvider()`) */
  readonly meterProvider?: MeterProvider;
  /** Guards whose routes' limits to report on `spillway.limit`. @default [] */
  readonly routes?: readonly ObservedGuard[];
  /** Dependencies whose cap, retry budget and breaker state to report. @default [] */
  readonly dependencies?: readonly ObservedDependency[];
}

/** The running metrics: dispose (or `close`) to unsubscribe and stop observing. */
export interface OtelMetrics extends Disposable {
  /** Unsubscribes from the channels and removes the observers. Idempotent. */
  close(): void;
}

/**
 * Records Spillway's decisions as OpenTelemetry metrics (see `docs/observability.md` for
 * every instrument, its unit and attributes). Never records the client key.
 *
 * @example
 * using _metrics = otelMetrics({ routes: [guard], dependencies: [users] });
 */
export function otelMetrics(options: OtelMetricsOptions = {}): OtelMetrics {
  if (typeof options !== 'object' || options === null) {
    throw new SpillwayConfigError('otelMetrics options', 'an options object', options);
  }
  const provider = options.meterProvider ?? metrics.getMeterProvider();
  if (typeof (provider as Partial<MeterProvider> | null)?.getMeter !== 'function') {
    throw new SpillwayConfigError('meterProvider', 'a MeterProvider', provider);
  }
  const guards = listOf('routes', options.routes, (g) => typeof g?.stats === 'function');
  const deps = listOf('dependencies', options.dependencies, (d) => typeof d?.name === 'string');
  return new Recorder(provider, guards, deps);
}

function listOf<T>(
  option: string,
  value: readonly T[] | undefined,
  ok: (item: Partial<T> | null | undefined) => boolean,
): readonly T[] {
  if (value === undefined) return [];
  const list = (Array.isArray(value) ? value : undefined) as readonly T[] | undefined;
  if (list === undefined || !list.every((item) => ok(item as Partial<T>))) {
    const what = option === 'routes' ? 'an array of guards' : 'an array of dependencies';
    throw new SpillwayConfigError(option, what, value);
  }
  return list.slice();
}

class Recorder implements OtelMetrics {
  readonly #subs = new Subscriptions();
  /**
   * The last admission published before this recorder subscribed: a release numbered above it
   * is of a request counted in here; at or below it, of one admitted before (not counted out).
   */
  readonly #since = admissionsPublished();
  /**
   * Requests counted in by this recorder, for messages that carry no number (published by an
   * older copy of Spillway in the same process), and for the line, whose entries are few.
   */
  readonly #active = new WeakSet<object>();
  readonly #waiting = new WeakSet<object>();

  constructor(
    provider: MeterProvider,
    guards: readonly ObservedGuard[],
    deps: readonly ObservedDependency[],
  ) {
    const meter = provider.getMeter('spillway');
    const {
      requests,
      activeRequests: active,
      queuedRequests: queued,
      timeInQueue,
      leaseDuration: lease,
      falsePositive,
      attempts,
      quotaDecisions: quota,
      limit,
      retryBudget: budget,
      circuitState: circuit,
    } = createInstruments(meter);

    // Counters and UpDownCounters are summed here per attribute set and handed to the SDK
    // when it collects (see pending-sums.ts); histograms' values are kept here and recorded
    // in runs (see pending-values.ts).
    const requestSums = new PendingSums(requests);
    const activeSums = new PendingSums(active);
    const queuedSums = new PendingSums(queued);
    const falsePositiveSums = new PendingSums(falsePositive);
    const attemptSums = new PendingSums(attempts);
    const quotaSums = new PendingSums(quota);
    const sums = [requestSums, activeSums, queuedSums, falsePositiveSums, attemptSums, quotaSums];
    const byRoute = (pending: PendingSums, route: string): { delta: number } =>
      pending.cell(route) ?? pending.open(route, { [a.route]: route });
    const waits = new PendingValues(timeInQueue);
    const leases = new PendingValues(lease);

    this.#subs.on(admissionChannel, (m: AdmissionMessage) => {
      const key = `${m.route}\n${m.result}\n${m.criticality ?? ''}`;
      (requestSums.cell(key) ?? requestSums.open(key, decisionAttributes(m))).delta++;
      if (m.queued) {
        if (this.#waiting.delete(m.req)) byRoute(queuedSums, m.route).delta--;
        const waitKey = `${m.route}\n${m.result}`;
        const cell =
          waits.cell(waitKey) ?? waits.open(waitKey, { [a.route]: m.route, [a.result]: m.result });
        waits.add(cell, m.waitMs / 1000);
      }
      if (m.result === 'admitted') {
        if (m.seq === undefined) this.#active.add(m.req);
        byRoute(activeSums, m.route).delta++;
      } else if (m.capacityFree && (m.result === 'shed' || m.result === 'overloaded')) {
        const cell =
          falsePositiveSums.cell(key) ?? falsePositiveSums.open(key, decisionAttributes(m));
        cell.delta++;
      }
    });
    this.#subs.on(queuedChannel, (m: QueuedMessage) => {
      this.#waiting.add(m.req);
      byRoute(queuedSums, m.route).delta++;
    });
    this.#subs.on(releaseChannel, (m: ReleaseMessage) => {
      const seen = m.seq === undefined ? this.#active.delete(m.req) : m.seq > this.#since;
      if (seen) byRoute(activeSums, m.route).delta--;
      const cell = leases.cell(m.route) ?? leases.open(m.route, { [a.route]: m.route });
      leases.add(cell, m.heldMs / 1000);
    });
    this.#subs.on(attemptChannel, (m: AttemptMessage) => {
      const retry = m.attempt > 1;
      const key = `${m.dependency}\n${m.outcome}\n${retry ? 1 : 0}`;
      const cell =
        attemptSums.cell(key) ??
        attemptSums.open(key, {
          [a.dependency]: m.dependency,
          [a.outcome]: m.outcome,
          [a.retry]: retry,
        });
      cell.delta++;
    });
    this.#subs.on(quotaChannel, (m: QuotaMessage) => {
      const key = `${m.route}\n${m.result}\n${m.degraded ? 1 : 0}`;
      const cell =
        quotaSums.cell(key) ??
        quotaSums.open(key, {
          [a.route]: m.route,
          [a.result]: m.result,
          [a.storeDegraded]: m.degraded,
        });
      cell.delta++;
    });
    const flush = (): void => {
      for (const pending of sums) pending.flush();
      waits.flush();
      leases.flush();
    };

    const observables = [limit, budget, circuit];
    const observe = (r: BatchObservableResult): void => {
      flush();
      for (const guard of guards) {
        for (const name of guard.routeNames()) {
          const stats = guard.stats(name);
          if (stats !== undefined) r.observe(limit, stats.limit, { [a.route]: name });
        }
      }
      for (const dep of deps) {
        const dependency = { [a.dependency]: dep.name };
        r.observe(limit, dep.limiter.limit, dependency);
        r.observe(budget, dep.budget.available, dependency);
        const state = dep.breaker?.state;
        if (state === undefined) continue;
        for (const s of circuitStates) {
          r.observe(circuit, s === state ? 1 : 0, { ...dependency, [a.state]: s });
        }
      }
    };
    meter.addBatchObservableCallback(observe, observables);
    this.#subs.add(() => meter.removeBatchObservableCallback(observe, observables));
    // Runs first at close: unsubscribed, the sums since the last collection still reach the SDK.
    this.#subs.add(flush);
  }

  close(): void {
    this.#subs.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/** The attributes of an admission decision. */
function decisionAttributes(m: AdmissionMessage): Attributes {
  const attrs: Attributes = { [a.route]: m.route, [a.result]: m.result };
  if (m.criticality !== undefined) attrs[a.criticality] = m.criticality;
  return attrs;
}
