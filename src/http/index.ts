/**
 * `spillway/http`: neutral HTTP semantics — the decision → response table (status,
 * `Retry-After`, `RateLimit-Policy`/`RateLimit`, `Spillway-Retry`, problem+json bodies), the
 * mapping of a failed handler's error to its caller's signal, and codecs for the request
 * fields Spillway reads. No `node:http` here; adapters (`spillway/node`, `/express`, `/fastify`)
 * translate.
 *
 * @module
 */
export {
  formatDeadlineMs,
  maxHeaderDeadlineMs,
  maxRetryAfterMs,
  parseAttempt,
  parseCriticality,
  parseDeadlineMs,
  parseRetryAfter,
  parseRetrySignal,
  retryAfterSeconds,
} from './codecs.js';
export { defaultHeaderNames, headerNamesOf, type HeaderNames } from './header-names.js';
export {
  formatRateLimit,
  formatRateLimitPolicy,
  policyName,
  quotaFields,
} from './rate-limit-fields.js';
export {
  refusalTable,
  type QuotaFields,
  type QuotaInfo,
  type Refusal,
  type RefusalReason,
} from './refusal.js';
export { refusalResponse, type RefusalResponse } from './refusal-response.js';
export { refusalFromError } from './refusal-from-error.js';
