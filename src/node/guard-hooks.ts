/**
 * The guard's hooks: `onRefused` for every refusal admission writes, `onEscalated` when a
 * client's own requests move it up the penalty ladder. Both are called synchronously on the
 * request's path, so keep them cheap (count, log, queue): whatever one throws is caught and
 * told to `onError` with the request, and admission goes on as if it had returned.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { SpillwayConfigError, type PenaltyStepEvent } from '../index.js';
import type { Refusal, RefusalReason, RefusalResponse } from '../http/index.js';

/** One refusal admission wrote (a handler's own failures are not among them). */
export interface RefusedInfo {
  readonly reason: RefusalReason;
  readonly status: number;
  /** The route's name. */
  readonly route: string;
  /** The client key; undefined if it could not be worked out (the key function threw). */
  readonly key: string | undefined;
  /** The wait the refusal advises, in ms, when it carries one. */
  readonly retryAfterMs: number | undefined;
  readonly req: IncomingMessage;
}

/** A client's own requests moved it up the penalty ladder. */
export interface EscalatedInfo {
  readonly key: string;
  /** The step now (1-based). */
  readonly step: number;
  readonly previous: number;
  /** Whether this move suspended it (the ladder's `suspend` step). */
  readonly suspended: boolean;
  /** The request whose violation moved it. */
  readonly req: IncomingMessage;
}

/** The hooks' options on `admission`. */
export interface GuardHookOptions {
  /** Called for every refusal admission writes; sync and cheap. @default none */
  readonly onRefused?: (info: RefusedInfo) => void;
  /**
   * Called when a client's requests move it up the penalty ladder on this process (with a
   * shared box, on the replica whose request did it); sync and cheap. @default none
   */
  readonly onEscalated?: (info: EscalatedInfo) => void;
}

/** What a refusal was about, as the guard's checks hold it. */
export interface RefusedAbout {
  readonly req: IncomingMessage;
  readonly route: string | { readonly name: string };
}

type OnError = (error: unknown, req: IncomingMessage) => void;

/** Where a hook's failure goes: `onError`, and if that throws too, the log. */
export interface HookFailures {
  readonly onError: OnError;
  readonly log: OnError;
}

/** The hooks of one guard, each call guarded. */
export class GuardHooks {
  readonly #onRefused: ((info: RefusedInfo) => void) | undefined;
  readonly #onEscalated: ((info: EscalatedInfo) => void) | undefined;
  readonly #failures: HookFailures;

  constructor(options: GuardHookOptions, failures: HookFailures) {
    this.#onRefused = options.onRefused;
    this.#onEscalated = options.onEscalated;
    this.#failures = failures;
  }

  /** Tells `onRefused`; `keyOf` works the key out (only now: a capacity refusal skips it). */
  refused<A extends RefusedAbout>(
    refusal: Refusal,
    response: RefusalResponse,
    at: { readonly about: A; readonly keyOf: (about: A) => string },
  ): void {
    const hook = this.#onRefused;
    if (hook === undefined) return;
    const { about, keyOf } = at;
    let key: string | undefined;
    try {
      key = keyOf(about);
    } catch {
      key = undefined;
    }
    const route = typeof about.route === 'string' ? about.route : about.route.name;
    const info: RefusedInfo = {
      reason: refusal.reason,
      status: response.status,
      route,
      key,
      retryAfterMs: refusal.retryAfterMs,
      req: about.req,
    };
    this.#call(() => hook(info), about.req);
  }

  /** Tells `onEscalated` of a move up caused by a request (other moves are not escalations). */
  escalated(event: PenaltyStepEvent): void {
    const hook = this.#onEscalated;
    if (hook === undefined || event.by !== 'violations' || !isRequest(event.cause)) return;
    const req = event.cause;
    const info: EscalatedInfo = {
      key: event.key,
      step: event.step,
      previous: event.previous,
      suspended: event.suspended,
      req,
    };
    this.#call(() => hook(info), req);
  }

  #call(fn: () => void, req: IncomingMessage): void {
    try {
      fn();
    } catch (error) {
      try {
        this.#failures.onError(error, req);
      } catch (again) {
        this.#failures.log(again, req);
      }
    }
  }
}

/** The checked hooks, or undefined when neither is set (nothing to call on the hot path). */
export function guardHooks(
  options: GuardHookOptions,
  failures: HookFailures,
): GuardHooks | undefined {
  for (const name of ['onRefused', 'onEscalated'] as const) {
    const hook: unknown = options[name];
    if (hook !== undefined && typeof hook !== 'function') {
      throw new SpillwayConfigError(name, 'a function of the info', hook);
    }
  }
  if (options.onRefused === undefined && options.onEscalated === undefined) return undefined;
  return new GuardHooks(options, failures);
}

function isRequest(cause: unknown): cause is IncomingMessage {
  return typeof cause === 'object' && cause !== null && 'headers' in cause && 'method' in cause;
}
