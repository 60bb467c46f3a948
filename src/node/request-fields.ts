/**
 * Reads the three request fields Spillway acts on (`Spillway-Deadline`, `Spillway-Criticality`,
 * `Spillway-Attempt`) from the raw header list, as the client sent them. node:http builds
 * `req.headers` lazily, lower-casing and copying every field of the request; a refusal that
 * needs three fields should not pay for all of them (S8 in BENCHMARKS.md). A field sent more
 * than once is ambiguous and reads as absent, as the codecs read a joined list.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import type { HeaderNames } from '../http/index.js';

/** The raw values, or `undefined` when a field is absent or repeated. */
export interface RequestFields {
  readonly deadline: string | undefined;
  readonly criticality: string | undefined;
  readonly attempt: string | undefined;
}

/** Marks a field seen twice. */
const repeated = '\u0000repeated';

/** The Spillway fields of `req` under `names` (lower-case, as configured). */
export function requestFields(req: IncomingMessage, names: HeaderNames): RequestFields {
  const raw = req.rawHeaders as string[] | undefined;
  if (!Array.isArray(raw)) {
    // Not a node:http request (a hand-made stand-in): its parsed fields are all there is.
    const h = req.headers;
    return {
      deadline: single(h[names.deadline]),
      criticality: single(h[names.criticality]),
      attempt: single(h[names.attempt]),
    };
  }
  const { deadline: d, criticality: c, attempt: a } = names;
  let deadline: string | undefined;
  let criticality: string | undefined;
  let attempt: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const n = name.length;
    // Lengths first: most fields of a request cannot match, and are never lower-cased.
    if (n !== d.length && n !== c.length && n !== a.length) continue;
    const lower = name.toLowerCase();
    const value = raw[i + 1]!;
    if (lower === d) deadline = deadline === undefined ? value : repeated;
    else if (lower === c) criticality = criticality === undefined ? value : repeated;
    else if (lower === a) attempt = attempt === undefined ? value : repeated;
  }
  return {
    deadline: deadline === repeated ? undefined : deadline,
    criticality: criticality === repeated ? undefined : criticality,
    attempt: attempt === repeated ? undefined : attempt,
  };
}

/**
 * The value of the request header `name` (any case) as the client sent it, read from the raw
 * header list — for a key function, which runs on every request, refused ones included: reading
 * `req.headers` instead makes node:http build the whole parsed header object first. A header
 * sent more than once reads as absent (ambiguous), as does a missing one.
 *
 * @example
 * admission({ quota, key: (req) => requestHeader(req, 'x-api-key') });
 */
export function requestHeader(req: IncomingMessage, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const raw = req.rawHeaders as string[] | undefined;
  if (!Array.isArray(raw)) return single(req.headers[wanted]);
  let found: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const field = raw[i]!;
    if (field.length !== wanted.length || field.toLowerCase() !== wanted) continue;
    if (found !== undefined) return undefined;
    found = raw[i + 1]!;
  }
  return found;
}

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
