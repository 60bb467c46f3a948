/**
 * The guard's admitted calls, between the two doors: what admission's result means for a call
 * (let through with a context, or the status to answer it with), and the hand-over of a call
 * the interceptor admitted to the unary wrapper that then runs it. The hand-over is found by
 * the call's request metadata — the object the interceptor passes on is the one grpc-js gives
 * the handler — in a `WeakMap`, so it lasts no longer than the call.
 *
 * @module
 */
import { Metadata, status, type StatusObject } from '@grpc/grpc-js';
import type { Clock } from '../index.js';
import type { HeaderNames } from '../http/index.js';
import type {
  Admission,
  AdmitResult,
  Admitted as NodeAdmitted,
  RequestContext,
} from '../node/index.js';
import { runAdmitted, type AmbientMode } from '../node/ambient.js';
import { exemptContext } from '../node/request-context.js';
import { statusOfRefusal } from './status-of-refusal.js';
import type { CallExchange } from './stand-in.js';

/** A call let through: its context, and the admitted request behind it (none when exempt). */
export interface Admitted {
  readonly context: RequestContext;
  readonly admitted: NodeAdmitted | undefined;
  readonly exchange: CallExchange;
  /** Set when the unary wrapper took the call over: the wrapper then settles it. */
  handedOver: boolean;
}

const failedStatus: StatusObject = Object.freeze({
  code: status.INTERNAL,
  details: 'The request failed on the server.',
  metadata: new Metadata(),
});

export class Admissions {
  readonly guard: Admission;
  readonly names: HeaderNames;
  readonly clock: Clock;
  /** When handlers run in the admitted call's ambient context (the `ambientContext` option). */
  readonly ambient: AmbientMode;
  readonly #exempt: RequestContext;
  readonly #byMetadata = new WeakMap<Metadata, Admitted>();

  constructor(
    guard: Admission,
    settings: { readonly names: HeaderNames; readonly clock: Clock; readonly ambient: AmbientMode },
  ) {
    this.guard = guard;
    this.names = settings.names;
    this.clock = settings.clock;
    this.ambient = settings.ambient;
    this.#exempt = exemptContext(settings.clock);
  }

  /** The call let through by `result`, or undefined when it was not. */
  letThrough(result: AdmitResult, exchange: CallExchange): Admitted | undefined {
    if (!result.admitted) return undefined;
    if (result.exempt) {
      return { context: this.#exempt, admitted: undefined, exchange, handedOver: false };
    }
    return { context: result.context, admitted: result.context, exchange, handedOver: false };
  }

  /**
   * The status answering a call admission did not let through: its refusal's, `INTERNAL` when
   * admission itself failed (the guard has told `onError`), or undefined when the client left
   * while it waited (nothing to answer).
   */
  refusalStatus(result: AdmitResult, exchange: CallExchange): StatusObject | undefined {
    if (result.admitted) return undefined;
    if (result.refusal !== undefined) return statusOfRefusal(result.refusal, this.names);
    return exchange.failed ? failedStatus : undefined;
  }

  /** Leaves a call the interceptor admitted for the unary wrapper to take over. */
  handOver(metadata: Metadata, admitted: Admitted): void {
    this.#byMetadata.set(metadata, admitted);
  }

  /** Runs `fn` in the ambient context of `admitted` (none for an exempt call). */
  run<R>(admitted: Admitted, fn: () => R): R {
    const context = admitted.admitted;
    return context === undefined ? fn() : runAdmitted(this.ambient, context, fn);
  }

  /** Takes over the call `metadata` belongs to, if the interceptor admitted it. */
  adopt(metadata: Metadata): Admitted | undefined {
    const admitted = this.#byMetadata.get(metadata);
    if (admitted === undefined) return undefined;
    this.#byMetadata.delete(metadata);
    admitted.handedOver = true;
    return admitted;
  }

  /** The context of a call the interceptor admitted, if not exempt. */
  contextOf(metadata: Metadata): RequestContext | undefined {
    return this.#byMetadata.get(metadata)?.admitted;
  }
}
