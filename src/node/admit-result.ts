/**
 * What admission decided for one request, as adapters receive it: let through (with the
 * context to run the work under), exempt, refused (with the response to write), or nothing to
 * write. Values, not exceptions: admission itself never throws.
 *
 * @module
 */
import type { Refusal, RefusalResponse } from '../http/index.js';
import type { Admitted } from './request-context.js';

/** The outcome of admission for one request. */
export type AdmitResult =
  /** Let through: run the work with `context`, then call `finish` (or `fail`). */
  | { readonly admitted: true; readonly context: Admitted; readonly exempt: false }
  /** An exempt route: run it, nothing to finish. */
  | { readonly admitted: true; readonly context: undefined; readonly exempt: true }
  /** Refused: write `response` (and close the connection if asked). */
  | {
      readonly admitted: false;
      readonly refusal: Refusal;
      readonly response: RefusalResponse;
      readonly closeConnection: boolean;
    }
  /**
   * Nothing (more) to write: the client went away while waiting, or admission itself failed
   * and the guard has already answered 500 through `Admission.fail`.
   */
  | {
      readonly admitted: false;
      readonly refusal: undefined;
      readonly response: undefined;
      readonly closeConnection: false;
    };

/** An exempt route's result. */
export const exemptResult: AdmitResult = Object.freeze({
  admitted: true,
  context: undefined,
  exempt: true,
});

/** Nothing to write: see {@link AdmitResult}. */
export const gone: AdmitResult = Object.freeze({
  admitted: false,
  refusal: undefined,
  response: undefined,
  closeConnection: false,
});
