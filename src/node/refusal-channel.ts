/**
 * The refusal diagnostics channel, `spillway:http:refusal` (listed with the others in
 * `src/channels`): every answer Spillway writes instead of the handler's — an admission
 * refusal, a handler failure mapped to a refusal, a 500 — is published here once, by the step
 * that builds its response. Only when someone subscribes: a refusal nobody watches pays for
 * nothing here.
 *
 * @module
 */
import type { Refusal, RefusalResponse } from '../http/index.js';
import { refusalChannel, type RefusalMessage } from '../channels/channels.js';

export { refusalChannel, type RefusalMessage };

/**
 * Whom a refusal answered: an admitted request's context, or what admission knew of it. The
 * key is published only when `publishKey` is true (the guard's `publishKey` option).
 */
export interface RefusalSubject {
  readonly route: string | undefined;
  readonly key: string | undefined;
  readonly publishKey?: boolean | undefined;
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
  refusalChannel.publish({
    reason: refusal.reason,
    status: response.status,
    signal: response.signal,
    route: subject?.route,
    key: subject?.publishKey === true ? subject.key : undefined,
  });
}
