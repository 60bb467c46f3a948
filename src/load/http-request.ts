/**
 * Serialises a request once, before the run, so sending costs one socket write and no string
 * work per request. Header names and values are checked here so a typo fails before any load
 * is sent, naming the option.
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

const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const badValue = /[\r\n\0]/;

/** The request's bytes. `option` names the source of the values in errors. */
export function serialiseRequest(parts: RequestParts, option: string): Buffer {
  if (!token.test(parts.method)) {
    throw new SpillwayConfigError(`${option}.method`, 'an HTTP method token', parts.method);
  }
  if (!parts.path.startsWith('/') || /[\s\0]/.test(parts.path)) {
    throw new SpillwayConfigError(
      `${option}.path`,
      "a path starting with '/' without spaces",
      parts.path,
    );
  }
  let head = `${parts.method} ${parts.path} HTTP/1.1\r\n`;
  const names = new Set<string>();
  for (const [name, value] of Object.entries(parts.headers)) {
    if (!token.test(name)) {
      throw new SpillwayConfigError(`${option}.headers`, 'valid header names', name);
    }
    if (typeof value !== 'string' || badValue.test(value)) {
      throw new SpillwayConfigError(
        `${option}.headers.${name}`,
        'a string without CR, LF or NUL',
        value,
      );
    }
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'transfer-encoding' || lower === 'connection') {
      throw new SpillwayConfigError(
        `${option}.headers`,
        'free of Content-Length, Transfer-Encoding and Connection (the generator sets them)',
        name,
      );
    }
    names.add(lower);
    head += `${name}: ${value}\r\n`;
  }
  if (!names.has('host')) head = head.replace('\r\n', `\r\nHost: ${parts.host}\r\n`);
  const body = parts.body;
  if (body !== undefined || ['POST', 'PUT', 'PATCH'].includes(parts.method)) {
    head += `Content-Length: ${body?.byteLength ?? 0}\r\n`;
  }
  if (parts.close) head += 'Connection: close\r\n';
  head += '\r\n';
  const headBytes = Buffer.from(head, 'latin1');
  return body === undefined || body.byteLength === 0 ? headBytes : Buffer.concat([headBytes, body]);
}
