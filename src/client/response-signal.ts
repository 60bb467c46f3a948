/**
 * What a callee's response says about retrying, read from (in order of trust) the
 * `Spillway-Retry` header, the status, `Retry-After`, and an `application/problem+json` body.
 * Only 429, 503 and 5xx answers carrying `Spillway-Retry` are refusals; anything else is an
 * answer, returned to the caller as is. Hostile values fall back to defaults, never to a
 * negative or endless wait.
 *
 * @module
 */
import type { RetrySignal } from '../index.js';
import {
  maxRetryAfterMs,
  parseRetryAfter,
  parseRetrySignal,
  type HeaderNames,
} from '../http/index.js';

/** A refusal: what to do next and when. */
export interface ResponseRefusal {
  readonly signal: RetrySignal;
  readonly retryAfterMs: number | undefined;
  /**
   * True when the callee said it is overloaded — a 429, or a signal in `Spillway-Retry`, a
   * problem+json body or `Retry-After`; false for a bare 503, whose signal is inferred (a proxy
   * with no upstream answers so, as does a server that is down rather than busy).
   */
  readonly explicit: boolean;
}

/** Largest refusal body read (problem+json bodies are a few hundred bytes). */
export const maxRefusalBodyBytes = 16_384;

/**
 * The refusal `response` stands for, or undefined when it is an ordinary answer. Consumes the
 * body of a refusal (read when small, so the connection stays reusable; cancelled otherwise).
 */
export async function refusalOf(
  response: Response,
  context: { readonly names: HeaderNames; readonly wallNow: () => number },
): Promise<ResponseRefusal | undefined> {
  const status = response.status;
  // The common answer costs one comparison: headers are read only for 429 and 5xx.
  if (status < 500 && status !== 429) return undefined;
  const headers = response.headers;
  const headerSignal = parseRetrySignal(headers.get(context.names.retry));
  if (status !== 429 && status !== 503 && headerSignal === undefined) return undefined;
  let retryAfterMs = parseRetryAfter(headers.get('retry-after'), context.wallNow());
  const body = await readSmall(response);
  let signal = headerSignal;
  if (body !== undefined && isProblem(headers.get('content-type'))) {
    const problem = parseProblem(body);
    signal ??= problem.signal;
    retryAfterMs ??= problem.retryAfterMs;
  }
  const explicit = status === 429 || signal !== undefined || retryAfterMs !== undefined;
  signal ??= status === 429 || retryAfterMs !== undefined ? 'later' : 'elsewhere';
  return { signal, retryAfterMs, explicit };
}

function isProblem(contentType: string | null): boolean {
  return contentType !== null && contentType.toLowerCase().includes('application/problem+json');
}

/** The Spillway fields of a problem+json body; anything malformed is absent. */
function parseProblem(body: string): {
  signal: RetrySignal | undefined;
  retryAfterMs: number | undefined;
} {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { signal: undefined, retryAfterMs: undefined };
  }
  const p = (typeof value === 'object' && value !== null ? value : {}) as {
    spillwayRetry?: unknown;
    retryAfterMs?: unknown;
  };
  const ms = p.retryAfterMs;
  return {
    signal: typeof p.spillwayRetry === 'string' ? parseRetrySignal(p.spillwayRetry) : undefined,
    retryAfterMs:
      typeof ms === 'number' && ms >= 0 && ms <= maxRetryAfterMs ? Math.ceil(ms) : undefined,
  };
}

/**
 * The body as text when it is at most {@link maxRefusalBodyBytes}; otherwise cancels it and
 * returns undefined. Reading a small body to its end lets the connection be reused.
 */
async function readSmall(response: Response): Promise<string | undefined> {
  const body = response.body;
  if (body === null) return undefined;
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (length > maxRefusalBodyBytes) {
    await body.cancel().catch(() => {});
    return undefined;
  }
  const reader = (body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxRefusalBodyBytes) {
        await reader.cancel().catch(() => {});
        return undefined;
      }
      chunks.push(value);
    }
  } catch {
    return undefined;
  } finally {
    reader.releaseLock();
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}
