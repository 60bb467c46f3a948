/**
 * The two kinds of work an attempt can carry: a `fetch` (which sends the propagation fields
 * and reads the answer's signal) and any function given to `call`. The client runs either the
 * same way; what differs is how each starts, reads its answer and tells the caller's own
 * mistakes from the dependency's failures.
 *
 * @module
 */
import {
  DependencyOverloadedError,
  DependencyUnreachableError,
  isUnsentNetworkError,
  type Criticality,
} from '../index.js';
import { describe } from '../core/errors/config-error.js';
import { rejectSoon } from '../core/internal/owned.js';
import type { Attempt, Work } from './records.js';
import { attemptHeaders } from './attempt.js';
import { mergeHeaders, type HeadersLike } from './propagation.js';
import { refusalOf } from './response-signal.js';
import { parseRetryAfter, type HeaderNames } from '../http/index.js';
import type { Settings } from './settings.js';
import type { DependencyContext } from './types.js';

const idempotentMethods: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'OPTIONS',
  'TRACE',
  'PUT',
  'DELETE',
]);

const neverAborted = new AbortController().signal;

/** What `call`'s function sees; the signal and the fields are made only if it asks for them. */
class Context implements DependencyContext {
  readonly attempt: number;
  readonly criticality: Criticality;
  readonly remainingMs: number | undefined;
  readonly #of: Attempt<unknown>;
  readonly #names: HeaderNames;
  #headers: Readonly<Record<string, string>> | undefined;

  constructor(attempt: Attempt<unknown>, names: HeaderNames) {
    this.attempt = attempt.number;
    this.criticality = attempt.call.criticality;
    this.remainingMs = attempt.remainingMs;
    this.#of = attempt;
    this.#names = names;
  }

  get headers(): Readonly<Record<string, string>> {
    return (this.#headers ??= attemptHeaders(this.#of, this.#names));
  }

  get signal(): AbortSignal {
    return this.#of.scope.signal ?? neverAborted;
  }
}

/** `fetch` as one attempt's work: sends the propagation fields, reads the answer's signal. */
export class FetchWork implements Work<Response> {
  readonly idempotent: boolean;
  readonly replayable: boolean;
  readonly signal: AbortSignal | undefined;
  readonly #s: Settings;
  readonly #target: string | URL | Request;
  readonly #init: RequestInit | undefined;
  readonly #baseHeaders: HeadersLike | undefined;
  /** The last refusal the callee made explicitly (see `verdictOf`). */
  #refused: unknown;
  readonly holds: boolean;
  readonly defaultFallback: ((error: unknown) => Response | PromiseLike<Response>) | undefined;
  /** An answer held back for a retry (`retryOn`), until the next attempt starts or the call ends. */
  #held: Response | undefined;

  constructor(s: Settings, input: string | URL | Request, init: RequestInit | undefined) {
    this.#s = s;
    this.#target =
      typeof input === 'string' && s.baseUrl !== undefined ? s.baseUrl.resolve(input) : input;
    this.#init = init;
    const request = typeof input === 'object' && input instanceof Request ? input : undefined;
    const method = init?.method ?? request?.method ?? 'GET';
    this.idempotent =
      method === 'GET' ||
      idempotentMethods.has(method) ||
      idempotentMethods.has(method.toUpperCase());
    // A streamed body cannot be sent twice, so such a request gets one attempt.
    this.replayable = isReplayable(init?.body) && (request === undefined || request.body === null);
    this.signal = init?.signal ?? undefined;
    this.#baseHeaders = init?.headers ?? request?.headers;
    this.holds = s.retryOn !== undefined;
    this.defaultFallback = s.fallback?.value;
  }

  start(attempt: Attempt<Response>): Promise<Response> {
    // A retry replaces the answer held back for it: its body is not read.
    if (this.#held !== undefined)
      this.takeHeld()!
        .body?.cancel()
        .catch(() => undefined);
    const fields = attemptHeaders(attempt, this.#s.names);
    const init = attemptInit(this.#init, this.#baseHeaders, fields);
    const signal = attempt.scope.signal;
    if (signal !== undefined) init.signal = signal;
    try {
      return this.#s.fetch(this.#target, init);
    } catch (error) {
      // A fetch that throws instead of rejecting failed the same way (see `callersOwn`).
      return rejection(error);
    }
  }

  settle(response: Response, attempt: Attempt<Response>): Promise<Response> | undefined {
    // Only 429 and 5xx can be refusals or failures: any other answer is settled as it stands.
    // (Read once: undici checks its brand on every read.)
    const status = (response as Partial<Response> | null | undefined)?.status;
    if (typeof status !== 'number') {
      // A `fetch` option that resolves with something else (a bug, a mock, a wrapper that
      // returns nothing) has answered nothing: the caller's problem, not the dependency's.
      throw new TypeError(
        `The fetch given to dependency ${this.#s.name} resolved with ${describe(response)}, not a Response`,
      );
    }
    const s = this.#s;
    if (status < 500 && status !== 429) {
      return s.retryOn?.has(status) === true ? this.#retryable(response, attempt) : undefined;
    }
    return refusalOf(response, { names: s.names, wallNow: () => s.clock.wallNow() }).then(
      (refusal) => {
        if (refusal === undefined) {
          return s.retryOn?.has(status) === true ? this.#retryable(response, attempt) : response;
        }
        const error = new DependencyOverloadedError(`${s.name} refused the request (${status})`, {
          signal: refusal.signal,
          retryAfterMs: refusal.retryAfterMs,
          dependency: s.name,
          status,
        });
        if (refusal.explicit) this.#refused = error;
        throw error;
      },
    );
  }

  /**
   * An answer `retryOn` lists: held back, and failed as a gateway's refusal would be so the
   * retry loop takes over, when the call is idempotent and has attempts left; otherwise the
   * answer as it stands.
   */
  #retryable(response: Response, attempt: Attempt<Response>): Promise<Response> {
    const call = attempt.call;
    if (!call.idempotent || attempt.number >= call.maxAttempts) return Promise.resolve(response);
    const s = this.#s;
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), s.clock.wallNow());
    this.#held = response;
    return rejection(
      new DependencyOverloadedError(`${s.name} answered ${response.status}`, {
        signal: retryAfterMs === undefined ? 'elsewhere' : 'later',
        retryAfterMs,
        dependency: s.name,
        status: response.status,
      }),
    );
  }

  takeHeld(): Response | undefined {
    const held = this.#held;
    this.#held = undefined;
    return held;
  }

  /** The dependency's own word that it is overloaded is a refusal; a bare 503 a failure. */
  verdictOf(error: unknown): 'refused' | undefined {
    return error === this.#refused ? 'refused' : undefined;
  }

  failed(response: Response): boolean {
    return response.status >= 500;
  }

  /**
   * undici refuses a malformed request — a header value with a line break, a body on a GET, an
   * unsupported method, a bad URL — with a `TypeError` before anything is sent; every failure
   * on the network is `TypeError('fetch failed')` with the cause attached. So is a URL whose
   * scheme it does not fetch over the network (`ftp:`, `file:`, `ws:`, a webhook's `mailto:`),
   * refused before anything is sent: read from the target, only once a fetch has failed.
   */
  callersOwn(error: unknown): boolean {
    if (!(error instanceof TypeError)) return false;
    return error.message !== 'fetch failed' || !isHttpTarget(this.#target);
  }

  fault(error: unknown): unknown {
    return new DependencyUnreachableError({
      sent: !isUnsentNetworkError(error),
      dependency: this.#s.name,
      cause: error,
    });
  }
}

/** Any function as one attempt's work: not idempotent unless the caller says so. */
export class CallWork<T> implements Work<T> {
  readonly idempotent = false;
  readonly replayable = true;
  readonly signal = undefined;
  readonly #fn: (context: DependencyContext) => T | PromiseLike<T>;
  readonly #names: HeaderNames;

  constructor(fn: (context: DependencyContext) => T | PromiseLike<T>, names: HeaderNames) {
    this.#fn = fn;
    this.#names = names;
  }

  start(attempt: Attempt<T>): T | PromiseLike<T> {
    return this.#fn(new Context(attempt, this.#names));
  }
}

/**
 * What a throw inside an `async` function would have become: `error`, as a rejection — made
 * late, once the caller listens, which under overload saves Node's rejection tracking on every
 * refused call (`rejectSoon`).
 */
export function rejection(error: unknown): Promise<never> {
  return rejectSoon(error);
}

/**
 * The init an attempt sends: the caller's, its headers (`base`) with the propagation `fields`
 * on top. A fresh object that nothing else holds, never the caller's and never shared: a fetch
 * wrapper (a tracer's, say) may write to the init it is given.
 */
function attemptInit(
  init: RequestInit | undefined,
  base: HeadersLike | undefined,
  fields: Readonly<Record<string, string>>,
): RequestInit {
  const headers = base === undefined ? fields : mergeHeaders(base, fields);
  return init === undefined ? { headers } : { ...init, headers };
}

/** Whether `target` names an `http:` or `https:` URL (what fetch sends over the network). */
function isHttpTarget(target: string | URL | Request): boolean {
  const href =
    typeof target === 'string' ? target : target instanceof URL ? target.href : target.url;
  const scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(href)?.[1]?.toLowerCase();
  return scheme === 'http' || scheme === 'https';
}

function isReplayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    body instanceof Blob ||
    body instanceof URLSearchParams ||
    body instanceof FormData
  );
}
