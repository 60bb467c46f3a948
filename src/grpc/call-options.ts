/**
 * Per-call settings for a call through `dependencyInterceptor`, carried on grpc-js's own call
 * options (which grpc-js hands every interceptor): `callOptions({ deadline: context,
 * criticality: 'sheddable' })`. Checked here, where the caller makes the call, so a mistake
 * throws at the call site instead of becoming a failed call.
 *
 * @module
 */
import type { CallOptions } from '@grpc/grpc-js';
import { criticalities, isCriticality, SpillwayArgumentError, type Criticality } from '../index.js';
import type { DeadlineInput } from '../client/index.js';

/** Spillway's settings for one call. */
export interface GrpcCallOptions {
  /** Aborting cancels the call, its wait and its retries (the call ends `CANCELLED`). */
  readonly signal?: AbortSignal | undefined;
  /**
   * When the caller stops caring: an incoming request's context (anything with `expiresAt` on
   * the dependency's clock), or ms from now. With grpc-js's own `deadline` too, the earlier
   * wins; it spans every attempt either way.
   */
  readonly deadline?: DeadlineInput | undefined;
  /** Sent as `spillway-criticality`. @default 'critical' */
  readonly criticality?: Criticality | undefined;
  /** Whether the call may safely run twice (then refusals are retried). @default the interceptor's */
  readonly idempotent?: boolean | undefined;
}

const key = Symbol.for('spillway.grpc.callOptions');

/**
 * grpc-js call options carrying Spillway's per-call settings; `grpc` are grpc-js's own
 * (`deadline`, `parent`, credentials…). Throws `SpillwayArgumentError` naming a bad setting.
 *
 * @example
 * client.getUser({ id }, new Metadata(), callOptions({ deadline: context, criticality: 'sheddable' }), done);
 */
export function callOptions(spillway: GrpcCallOptions, grpc: CallOptions = {}): CallOptions {
  if (typeof spillway !== 'object' || spillway === null) {
    throw new SpillwayArgumentError('callOptions', 'an options object', spillway);
  }
  const { signal, deadline, criticality, idempotent } = spillway;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new SpillwayArgumentError('signal', 'an AbortSignal', signal);
  }
  if (criticality !== undefined && !isCriticality(criticality)) {
    throw new SpillwayArgumentError(
      'criticality',
      `one of ${criticalities.join(', ')}`,
      criticality,
    );
  }
  if (idempotent !== undefined && typeof idempotent !== 'boolean') {
    throw new SpillwayArgumentError('idempotent', 'a boolean', idempotent);
  }
  if (
    deadline !== undefined &&
    !(typeof deadline === 'number' && deadline >= 0) &&
    !(typeof deadline === 'object' && deadline !== null && typeof deadline.expiresAt === 'number')
  ) {
    throw new SpillwayArgumentError(
      'deadline',
      'an object with expiresAt on the clock, or milliseconds from now',
      deadline,
    );
  }
  return Object.assign({}, grpc, { [key]: spillway });
}

/** The Spillway settings on `options`, if any. */
export function spillwayOptionsOf(options: CallOptions): GrpcCallOptions | undefined {
  return (options as { [key]?: GrpcCallOptions })[key];
}
