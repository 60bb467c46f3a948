/**
 * Serialises a request once, before the run, so sending costs one socket write and no string
 * work per request. What goes on the wire is checked first, against the grammar a strict HTTP
 * parser holds the bytes to, so a value can never become a second header line or a second
 * request (a character above U+00FF written as latin1 would lose its high byte: U+010D becomes
 * CR). A typo or a hostile value fails before any load is sent, naming the option.
 *
 * @module
 */
import { SpillwayConfigError } from '../core/errors/config-error.js';

/** What goes on the wire for one group (and one client identity). */
export interface RequestParts {
  readonly method: string;
  /** Path and query, starting with `/`. */
  readonly path: string;
  /** Value of the `Host` header (unless `headers` has one). */
  readonly host: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | undefined;
  /** Send `Connection: close` (a new connection per request). */
  readonly close: boolean;
}

/** RFC 9110 §5.6.2 token: a method or a header name. */
const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Origin-form, byte for byte: `/` then visible ASCII (no space, control, DEL or non-ASCII). */
const originForm = /^\/[\x21-\x7e]*$/;
/**
 * RFC 9110 §5.5 field-value: visible ASCII and obs-text (U+0080–U+00FF, one latin1 byte each),
 * with spaces and tabs only inside (a parser strips them at either end, so they would not
 * arrive as given).
 */
const fieldValue = /^(?:[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;
/** Framing headers the generator writes itself; a second copy would desynchronise the server. */
const framing = new Set(['content-length', 'transfer-encoding', 'connection']);

/** ` (U+010D at index 3)`: which character broke the rule, since it may not print. */
function firstBad(value: string, fits: (code: number) => boolean): string {
  for (let i = 0; i < value.length; i++) {
    const code = value.codePointAt(i)!;
    if (!fits(code)) {
      return ` (U+${code.toString(16).toUpperCase().padStart(4, '0')} at index ${i} is not allowed)`;
    }
  }
  return '';
}

const visibleAscii = (code: number): boolean => code >= 0x21 && code <= 0x7e;
const tokenChar = (code: number): boolean => token.test(String.fromCodePoint(code));

/** A method: an RFC 9110 token, upper-cased (ASCII only, so nothing turns into a token). */
export function checkMethod(option: string, value: unknown): string {
  if (typeof value !== 'string' || !token.test(value)) {
    const why = typeof value === 'string' ? firstBad(value, tokenChar) : '';
    throw new SpillwayConfigError(option, `an HTTP method token${why}`, value);
  }
  return value.toUpperCase();
}

/**
 * A request target, sent byte for byte as given: `/` then visible ASCII. Anything else is
 * refused, not encoded: percent-encode it yourself (`encodeURI`), so the bytes the server gets
 * are the bytes you wrote.
 */
export function checkPath(option: string, value: unknown): string {
  if (typeof value !== 'string' || !originForm.test(value)) {
    const why =
      typeof value === 'string' && value.startsWith('/') ? firstBad(value, visibleAscii) : '';
    throw new SpillwayConfigError(
      option,
      `a path starting with '/' of visible ASCII only, percent-encoded${why}`,
      value,
    );
  }
  return value;
}

/**
 * Headers given by the user: each name a token, once (case-insensitively), not one of the
 * framing headers the generator sets; each value a field-value. Returns them as given.
 */
export function checkHeaders(option: string, value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpillwayConfigError(option, 'an object of header names to string values', value);
  }
  const seen = new Set<string>();
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (!token.test(name)) {
      throw new SpillwayConfigError(
        option,
        `valid header names, RFC 9110 tokens${firstBad(name, tokenChar)}`,
        name,
      );
    }
    const lower = name.toLowerCase();
    if (framing.has(lower)) {
      throw new SpillwayConfigError(
        option,
        'free of Content-Length, Transfer-Encoding and Connection (the generator sets them)',
        name,
      );
    }
    if (seen.has(lower)) {
      throw new SpillwayConfigError(option, 'each header name once (names ignore case)', name);
    }
    seen.add(lower);
    if (typeof v !== 'string' || !fieldValue.test(v)) {
      const why =
        typeof v !== 'string'
          ? ''
          : /^[\t ]|[\t ]$/.test(v)
            ? ' (no space or tab at either end: HTTP strips them)'
            : firstBad(
                v,
                (c) => c === 0x09 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff),
              );
      throw new SpillwayConfigError(
        `${option}.${name}`,
        `a header value of visible ASCII, spaces, tabs or U+0080–U+00FF (sent as latin1)${why}`,
        v,
      );
    }
  }
  return value as Readonly<Record<string, string>>;
}

/**
 * `base` with `over` laid on top, names compared without case (an override replaces, never
 * doubles, a header).
 */
export function mergeHeaders(
  base: Readonly<Record<string, string>>,
  over: Readonly<Record<string, string>>,
): Record<string, string> {
  const overridden = new Set(Object.keys(over).map((name) => name.toLowerCase()));
  // No prototype: `__proto__` is a valid header name, and must stay a header.
  const merged = Object.create(null) as Record<string, string>;
  for (const [name, value] of Object.entries(base)) {
    if (!overridden.has(name.toLowerCase())) merged[name] = value;
  }
  for (const [name, value] of Object.entries(over)) merged[name] = value;
  return merged;
}

/**
 * The request's bytes. Every part is checked as above (`option` names their source in errors),
 * so no input can put anything on the wire but the one request it describes.
 */
export function serialiseRequest(parts: RequestParts, option: string): Buffer {
  const method = checkMethod(`${option}.method`, parts.method);
  const path = checkPath(`${option}.path`, parts.path);
  const headers = checkHeaders(`${option}.headers`, parts.headers);
  let head = `${method} ${path} HTTP/1.1\r\n`;
  let hasHost = false;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'host') hasHost = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!hasHost) head = head.replace('\r\n', `\r\nHost: ${parts.host}\r\n`);
  const body = parts.body;
  if (body !== undefined || ['POST', 'PUT', 'PATCH'].includes(method)) {
    head += `Content-Length: ${body?.byteLength ?? 0}\r\n`;
  }
  if (parts.close) head += 'Connection: close\r\n';
  head += '\r\n';
  // Every character is now at most U+00FF: latin1 writes each as the one byte it stands for.
  const headBytes = Buffer.from(head, 'latin1');
  return body === undefined || body.byteLength === 0 ? headBytes : Buffer.concat([headBytes, body]);
}
