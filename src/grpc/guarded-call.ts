/**
 * One unary call through `dependencyInterceptor`. It stands where grpc-js expects the next
 * call in the chain, keeps what the caller sends (metadata, the one message), and when the
 * caller half-closes runs the call through `dependency.call`: the deadline → the breaker → the
 * cap (a place, perhaps after a bounded wait) → the throttle → an attempt; a refused attempt is
 * retried by the dependency's rules (idempotent only, within the budget and `maxAttempts`,
 * after full-jitter backoff no shorter than the pushback, never past the deadline). Each
 * attempt is a fresh call down the chain, carrying the caller's metadata plus
 * `spillway-deadline`, `spillway-criticality` and `spillway-attempt`, with a gRPC deadline of
 * what is left of the one deadline. The caller gets one answer: the last attempt's, or the
 * status the failure stands for (`status-of-failure.ts`).
 *
 * @module
 */
import { Metadata, status, type InterceptorOptions, type NextCall } from '@grpc/grpc-js';
import type { Clock, Criticality } from '../index.js';
import { parseCriticality, type HeaderNames } from '../http/index.js';
import type { DeadlineInput, Dependency, DependencyContext } from '../client/index.js';
import { attemptOutcome, type GrpcAnswer } from './attempt-outcome.js';
import type { GrpcCallOptions } from './call-options.js';
import { statusOfFailure } from './status-of-failure.js';

type InterceptingCallInterface = ReturnType<NextCall>;
type Listener = Parameters<InterceptingCallInterface['start']>[1];
type MessageContext = Parameters<InterceptingCallInterface['sendMessageWithContext']>[0];

/** What a guarded call needs besides the call itself. */
export interface GuardedCallSettings {
  readonly dependency: Dependency;
  readonly names: HeaderNames;
  readonly clock: Clock;
  /** Whether calls to `path` may run twice, when the call does not say. */
  readonly idempotent: (path: string) => boolean;
}

/** What a call asks of the dependency (a subset of its `CallOptions`). */
interface CallSettings {
  readonly signal: AbortSignal;
  readonly deadline: DeadlineInput | undefined;
  readonly criticality?: Criticality;
  readonly idempotent: boolean;
}

/** A unary call run through the dependency. */
export class GuardedCall implements InterceptingCallInterface {
  readonly #s: GuardedCallSettings;
  readonly #options: InterceptorOptions;
  readonly #own: GrpcCallOptions | undefined;
  readonly #next: NextCall;
  readonly #controller = new AbortController();
  #metadata: Metadata | undefined;
  #listener: Listener;
  #message: unknown;
  #flags: number | undefined;
  #current: InterceptingCallInterface | undefined;
  #cancelled: { readonly code: status; readonly details: string } | undefined;
  #started = false;
  #done = false;

  constructor(p: {
    readonly settings: GuardedCallSettings;
    readonly options: InterceptorOptions;
    readonly own: GrpcCallOptions | undefined;
    readonly next: NextCall;
  }) {
    this.#s = p.settings;
    this.#options = p.options;
    this.#own = p.own;
    this.#next = p.next;
  }

  start(metadata: Metadata, listener?: Listener): void {
    this.#metadata = metadata;
    this.#listener = listener;
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.#message = message;
    this.#flags = context.flags;
    // Kept, not sent: it is written by each attempt.
    context.callback?.();
  }

  sendMessage(message: unknown): void {
    this.sendMessageWithContext({}, message);
  }

  halfClose(): void {
    if (this.#started || this.#done) return;
    this.#started = true;
    // `call` never throws: what fails before an attempt rejects too.
    const settled = this.#s.dependency.call(
      (context) => this.#attempt(context),
      this.#callOptions(),
    );
    settled.then(
      (answer) => this.#deliver(answer),
      (error: unknown) => this.#deliver(this.#failed(error)),
    );
  }

  startRead(): void {
    // The attempts read their own answers.
  }

  cancelWithStatus(code: status, details: string): void {
    if (this.#done || this.#cancelled !== undefined) return;
    this.#cancelled = { code, details };
    this.#controller.abort(new Error(details));
    // Not started yet: there is nothing to wait for.
    if (!this.#started) this.#deliver(this.#failed(undefined));
  }

  getPeer(): string {
    return this.#current?.getPeer() ?? 'unknown';
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.#current?.getAuthContext() ?? null;
  }

  /** The call's settings for the dependency: one deadline, the caller's signals joined. */
  #callOptions(): CallSettings {
    const own = this.#own;
    const signal = own?.signal;
    if (signal !== undefined) {
      if (signal.aborted) this.#controller.abort(signal.reason);
      else signal.addEventListener('abort', this.#onCallerAbort, { once: true });
    }
    const criticality: Criticality | undefined =
      own?.criticality ?? parseCriticality(textOf(this.#metadata?.get(this.#s.names.criticality)));
    const path = this.#options.method_definition.path;
    return {
      signal: this.#controller.signal,
      deadline: this.#deadline(),
      ...(criticality === undefined ? {} : { criticality }),
      idempotent: own?.idempotent ?? this.#s.idempotent(path),
    };
  }

  readonly #onCallerAbort = (): void => {
    const signal = this.#own?.signal;
    this.#controller.abort(signal?.reason);
  };

  /** The earliest of the call's deadlines: Spillway's, grpc-js's own, and its parent call's. */
  #deadline(): DeadlineInput | undefined {
    const clock = this.#s.clock;
    let ms: number | undefined;
    for (const d of [this.#options.deadline, this.#options.parent?.getDeadline()]) {
      const at = d instanceof Date ? d.getTime() : d;
      if (typeof at === 'number' && Number.isFinite(at)) {
        const left = Math.max(0, at - clock.wallNow());
        ms = ms === undefined ? left : Math.min(ms, left);
      }
    }
    const own = this.#own?.deadline;
    if (own === undefined || ms === undefined) return own ?? ms;
    const ownMs = typeof own === 'number' ? own : own.expiresAt - clock.now();
    return ownMs <= ms ? own : ms;
  }

  /** One attempt: a fresh call down the chain, answered with its status. */
  #attempt(context: DependencyContext): Promise<GrpcAnswer> {
    const s = this.#s;
    const left = context.remainingMs;
    const call = this.#next({
      ...this.#options,
      deadline:
        left === undefined ? (this.#options.deadline ?? Infinity) : s.clock.wallNow() + left,
    });
    this.#current = call;
    const metadata = this.#metadata?.clone() ?? new Metadata();
    for (const [name, value] of Object.entries(context.headers)) metadata.set(name, value);
    const signal = context.signal;
    return new Promise<GrpcAnswer>((resolve, reject) => {
      let headers: Metadata | undefined;
      let message: unknown;
      const onAbort = (): void => call.cancelWithStatus(status.CANCELLED, 'Cancelled by Spillway');
      signal.addEventListener('abort', onAbort, { once: true });
      call.start(metadata, {
        onReceiveMetadata: (m: Metadata) => (headers = m),
        onReceiveMessage: (m: unknown) => (message = m),
        onReceiveStatus: (st) => {
          signal.removeEventListener('abort', onAbort);
          // Aborted by its own timer, the deadline or the caller: the dependency reads which.
          if (signal.aborted) return reject(signal.reason as Error);
          const answer: GrpcAnswer = { headers, message, status: st };
          const outcome = attemptOutcome(answer, { names: s.names, dependency: s.dependency.name });
          if (outcome.ok) resolve(answer);
          else reject(outcome.error);
        },
      });
      call.sendMessageWithContext(
        this.#flags === undefined ? {} : { flags: this.#flags },
        this.#message,
      );
      call.halfClose();
    });
  }

  /** The answer for a call that failed with `error`. */
  #failed(error: unknown): GrpcAnswer {
    const cancelled = this.#cancelled;
    const st =
      cancelled !== undefined
        ? { code: cancelled.code, details: cancelled.details, metadata: new Metadata() }
        : this.#own?.signal?.aborted === true
          ? { code: status.CANCELLED, details: 'Cancelled by the caller', metadata: new Metadata() }
          : statusOfFailure(error, this.#s.names);
    return { headers: undefined, message: undefined, status: st };
  }

  /** Hands the one answer to the caller. */
  #deliver(answer: GrpcAnswer): void {
    if (this.#done) return;
    this.#done = true;
    this.#own?.signal?.removeEventListener('abort', this.#onCallerAbort);
    const listener = this.#listener;
    listener?.onReceiveMetadata?.(answer.headers ?? new Metadata());
    if (answer.status.code === status.OK) listener?.onReceiveMessage?.(answer.message);
    listener?.onReceiveStatus?.(answer.status);
  }
}

function textOf(values: readonly unknown[] | undefined): string | undefined {
  return values !== undefined && values.length === 1 && typeof values[0] === 'string'
    ? values[0]
    : undefined;
}
