/**
 * `otelTraceMarks`: marks the OpenTelemetry span active where Spillway decides — the one the
 * user's HTTP instrumentation opened for the request — with what Spillway did to it. A request
 * refused, shed or queued gets the result, the route, the criticality, the wait in line and
 * the signal it was given as span attributes; a request let straight through is left alone.
 * A dependency call gets an event per retry (the backoff chosen, the budget left) and per
 * attempt refused before it was sent. Nothing is marked where no span is recording.
 *
 * @module
 */
import { trace, type Attributes } from '@opentelemetry/api';
import {
  admissionChannel,
  attemptChannel,
  retryChannel,
  type AdmissionMessage,
  type AttemptMessage,
  type RetryMessage,
} from '../channels/channels.js';
import { attributeNames as a } from './instruments.js';
import { Subscriptions } from './subscriptions.js';

/** The running marks: dispose (or `close`) to stop. */
export interface OtelTraceMarks extends Disposable {
  /** Unsubscribes from the channels. Idempotent. */
  close(): void;
}

/** Span attributes and event names the marks use, beside the metrics' attribute names. */
export const markNames = {
  queued: 'spillway.queued',
  timeInQueueMs: 'spillway.time_in_queue_ms',
  signal: 'spillway.signal',
  retryAfterMs: 'spillway.retry_after_ms',
  attempt: 'spillway.attempt',
  backoffMs: 'spillway.backoff_ms',
  budgetLeft: 'spillway.retry_budget',
  localReason: 'spillway.local_reason',
  retryEvent: 'spillway.retry',
  localRefusalEvent: 'spillway.local_refusal',
} as const;

/**
 * Marks active spans with Spillway's decisions (see the module comment). Uses the global
 * tracer's context: register a context manager (the Node SDK does) for spans to be found.
 *
 * @example
 * using _marks = otelTraceMarks();
 */
export function otelTraceMarks(): OtelTraceMarks {
  const subs = new Subscriptions();
  subs.on(admissionChannel, markAdmission);
  subs.on(retryChannel, markRetry);
  subs.on(attemptChannel, markLocalRefusal);
  const close = (): void => subs.close();
  return { close, [Symbol.dispose]: close };
}

function recordingSpan() {
  const span = trace.getActiveSpan();
  return span !== undefined && span.isRecording() ? span : undefined;
}

function markAdmission(m: AdmissionMessage): void {
  if (m.result === 'admitted' && !m.queued) return;
  const span = recordingSpan();
  if (span === undefined) return;
  const attrs: Attributes = {
    [a.result]: m.result,
    [a.route]: m.route,
    [markNames.queued]: m.queued,
  };
  if (m.criticality !== undefined) attrs[a.criticality] = m.criticality;
  if (m.queued) attrs[markNames.timeInQueueMs] = m.waitMs;
  if (m.signal !== undefined) attrs[markNames.signal] = m.signal;
  if (m.retryAfterMs !== undefined) attrs[markNames.retryAfterMs] = m.retryAfterMs;
  span.setAttributes(attrs);
}

function markRetry(m: RetryMessage): void {
  recordingSpan()?.addEvent(markNames.retryEvent, {
    [a.dependency]: m.dependency,
    [markNames.attempt]: m.attempt,
    [markNames.backoffMs]: m.backoffMs,
    [markNames.budgetLeft]: m.budgetLeft,
  });
}

function markLocalRefusal(m: AttemptMessage): void {
  if (m.outcome !== 'local') return;
  recordingSpan()?.addEvent(markNames.localRefusalEvent, {
    [a.dependency]: m.dependency,
    [markNames.attempt]: m.attempt,
    [markNames.localReason]: m.localReason ?? 'other',
  });
}
