/**
 * Where every adapter calls the user's handler: inside the admitted request's ambient context
 * (`currentContext()` in the core), so `spillway/client` carries the request's deadline and
 * criticality to the next hop by itself. The context is a small object of its own, not the
 * request's: a timer the handler leaves behind keeps it alive, and it should not keep the
 * request and its socket alive with it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpillwayConfigError } from '../index.js';
import { ambientStore, type AmbientContext } from '../core/ambient-context/ambient-context.js';
import type { Admitted, RequestContext } from './request-context.js';

/** Whether a guard made with `option` runs handlers in the ambient context. @default true */
export function ambientOption(option: unknown): boolean {
  if (option === undefined) return true;
  if (typeof option !== 'boolean') {
    throw new SpillwayConfigError('ambientContext', 'true or false', option);
  }
  return option;
}

/** The ambient context of an admitted request. */
export function ambientOf(context: RequestContext): AmbientContext {
  return {
    expiresAt: context.expiresAt,
    clock: context.clock,
    signal: context.signal,
    criticality: context.criticality,
    attempt: context.attempt,
  };
}

/**
 * Runs `fn` for the admitted request `context`: inside its ambient context when `on`, as it is
 * otherwise.
 */
export function runAdmitted<R>(on: boolean, context: RequestContext, fn: () => R): R {
  return on ? ambientStore.run(ambientOf(context), fn) : fn();
}

/** A guarded node:http handler (the guard's `AdmittedHandler`, restated to keep this a leaf). */
type Handler = (req: IncomingMessage, res: ServerResponse, context: Admitted) => unknown;

/** Calls the node guard's `handler` for `context`, inside its ambient context when `on`. */
export function callHandler(on: boolean, handler: Handler, context: Admitted): unknown {
  const { req, res } = context;
  return on
    ? ambientStore.run(ambientOf(context), handler, req, res, context)
    : handler(req, res, context);
}

/** `handler`, run inside each request's ambient context (for the traced path). */
export function withAmbient(handler: Handler): Handler {
  return (req, res, context) => ambientStore.run(ambientOf(context), handler, req, res, context);
}
