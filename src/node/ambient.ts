/**
 * Where every adapter calls the user's handler: inside the admitted request's ambient context
 * (`currentContext()` in the core), so `spillway/client` carries the request's deadline and
 * criticality to the next hop by itself. The context is a small object of its own, not the
 * request's (`Admitted.ambient()`): a timer the handler leaves behind keeps it alive, and it
 * should not keep the request and its socket alive with it.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpillwayConfigError } from '../index.js';
import { ambientHasReader, ambientStore } from '../core/ambient-context/ambient-context.js';
import type { Admitted } from './request-context.js';

/**
 * When a guard enters its admitted requests' ambient context: `'always'` (`ambientContext:
 * true`), `'never'` (`false`), or — the default — `'read'`: once the process has a reader of it
 * (a `dependency()`, or a call to `currentContext()`), so a process that never reads it does not
 * pay for async hooks on Node 20 and 22.
 */
export type AmbientMode = 'always' | 'never' | 'read';

/** The mode of a guard made with `option`. */
export function ambientOption(option: unknown): AmbientMode {
  if (option === undefined) return 'read';
  if (typeof option !== 'boolean') {
    throw new SpillwayConfigError('ambientContext', 'true or false', option);
  }
  return option ? 'always' : 'never';
}

/** Whether a guard in `mode` enters the context now. */
function enters(mode: AmbientMode): boolean {
  return mode === 'always' || (mode === 'read' && ambientHasReader());
}

/**
 * Runs `fn` for the admitted request `context`: inside its ambient context when `mode` says so
 * now, as it is otherwise.
 */
export function runAdmitted<R>(mode: AmbientMode, context: Admitted, fn: () => R): R {
  return enters(mode) ? ambientStore.run(context.ambient(), fn) : fn();
}

/** A guarded node:http handler (the guard's `AdmittedHandler`, restated to keep this a leaf). */
type Handler = (req: IncomingMessage, res: ServerResponse, context: Admitted) => unknown;

/** Calls the node guard's `handler` for `context`, inside its ambient context when `mode` says so now. */
export function callHandler(mode: AmbientMode, handler: Handler, context: Admitted): unknown {
  const { req, res } = context;
  return enters(mode)
    ? ambientStore.run(context.ambient(), handler, req, res, context)
    : handler(req, res, context);
}

/** `handler`, called as {@link callHandler} calls it (for the traced path). */
export function withAmbient(mode: AmbientMode, handler: Handler): Handler {
  return (req, res, context) => callHandler(mode, handler, context);
}
