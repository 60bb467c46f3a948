/**
 * Short, human descriptions of a failure for the messages of errors that wrap it: what a
 * network error says (its code and the address it failed on, found through `cause` chains and
 * the per-address errors of an `AggregateError`), and any error's message without the code
 * suffix every Spillway error's message carries.
 *
 * @module
 */
import { isSpillwayError } from './spillway-error.js';

/**
 * The network code and address a transport error carries, e.g. `ECONNREFUSED 127.0.0.1:8080`,
 * or undefined when it carries no code.
 */
export function networkDetail(error: unknown): string | undefined {
  let e = error;
  for (let depth = 0; depth < 6 && typeof e === 'object' && e !== null; depth++) {
    const f = e as { code?: unknown; address?: unknown; port?: unknown; errors?: unknown };
    const inner =
      Array.isArray(f.errors) && f.errors.length > 0 ? (f.errors[0] as unknown) : undefined;
    if (typeof f.code === 'string' && !isSpillwayError(e)) {
      // Node's connect to several addresses sets the code on the AggregateError; each address's
      // own error has the address.
      if (typeof f.address !== 'string' && inner !== undefined) {
        const deeper = networkDetail(inner);
        if (deeper !== undefined) return deeper;
      }
      if (typeof f.address !== 'string') return f.code;
      return `${f.code} ${f.address}${typeof f.port === 'number' ? `:${f.port}` : ''}`;
    }
    e = inner ?? (f as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `error`'s message, without the `(SPILLWAY_E_…, see docs/errors.md…)` suffix; bounded. */
export function summaryOf(error: unknown): string {
  let message: string;
  try {
    message =
      error instanceof Error ? error.message : typeof error === 'string' ? error : String(error);
  } catch {
    // A value whose conversion throws must not turn the wrapping error's message into a throw.
    message = Object.prototype.toString.call(error);
  }
  const plain = isSpillwayError(error)
    ? message.replace(/ \(SPILLWAY_E_[A-Z_]+, see [^)]*\)$/, '')
    : message;
  return plain.length > 300 ? `${plain.slice(0, 297)}...` : plain;
}
