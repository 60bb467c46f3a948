/**
 * The refusal diagnostics channel, `spillway:http:refusal`: every answer Spillway writes instead
 * of the handler's — an admission refusal, a handler failure mapped to a refusal, a 500 — is
 * published here once, by the step that builds its response. Only when someone subscribes: a
 * refusal nobody watches pays for nothing here.
 *
 * @module
 */
import { channel } from 'node:diagnostics_channel';
import type { RetrySignal } from '../index.js';
import type { Refusal, RefusalReason, RefusalResponse } from '../http/index.js';

/** Subscribe to see every refusal (published only when someone listens). */
export const refusalChannel = channel('spillway:http:refusal');

/** What {@link refusalChannel} publishes for each refusal. */
export interface RefusalMessage {
  readonly reason: RefusalReason;
  readonly status: number;
  /** `Spillway-Retry` as sent; undefined for the 500. */
  readonly signal: RetrySignal | undefined;
  /** The route's name; undefined when the request never reached one (admission failed). */
  readonly route: string | undefined;
  /** The client key; undefined when it is not known (admission failed before it was). */
  readonly key: string | undefined;
}

/** Whom a refusal answered: an admitted request's context, or what admission knew of it. */
export interface RefusalSubject {
  readonly route: string | undefined;
  readonly key: string | undefined;
}

/**
 * Publishes one refusal. Callers check `refusalChannel.hasSubscribers` first, so that working
 * out the subject (a key function, say) costs nothing when nobody listens.
 */
export function publishRefusal(
  refusal: Refusal,
  response: RefusalResponse,
  subject: RefusalSubject | undefined,
): void {
  const message: RefusalMessage = {
    reason: refusal.reason,
    status: response.status,
    signal: response.signal,
    route: subject?.route,
    key: subject?.key,
  };
  refusalChannel.publish(message);
}
