/**
 * A small incremental HTTP/1.1 response parser for the generator's own client: status line,
 * the four headers the generator needs (`Content-Length`, `Transfer-Encoding`, `Connection`,
 * `Retry-After`), and the body framing (length, chunked, or until close) so a keep-alive
 * connection can carry the next request. Bodies are skipped, never buffered.
 *
 * @module
 */

/** What {@link ResponseParser.feed} found: needs more bytes, a whole response, or garbage. */
export type ParseResult = 'more' | 'done' | 'error';

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'trailers' | 'close' | 'done';

/** Largest response head accepted; beyond it the response is treated as garbage. */
const maxHeadBytes = 64 * 1024;
const crlfcrlf = Buffer.from('\r\n\r\n', 'latin1');
const httpPrefix = Buffer.from('HTTP/1.', 'latin1');
const contentLength = Buffer.from('content-length', 'latin1');
const transferEncoding = Buffer.from('transfer-encoding', 'latin1');
const connection = Buffer.from('connection', 'latin1');
const retryAfterName = Buffer.from('retry-after', 'latin1');

function startsWith(data: Buffer, at: number, prefix: Buffer): boolean {
  for (let i = 0; i < prefix.length; i++) if (data[at + i] !== prefix[i]) return false;
  return true;
}

/** Whether the header name at `at` is `name` (given in lower case), ignoring ASCII case. */
function sameName(data: Buffer, at: number, name: Buffer): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = data[at + i]!;
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== name[i]) return false;
  }
  return true;
}

/** The decimal number in `data[from, to)` between optional spaces and tabs; −1 if there is none. */
function digits(data: Buffer, from: number, to: number): number {
  while (from < to && (data[from] === 32 || data[from] === 9)) from++;
  while (to > from && (data[to - 1] === 32 || data[to - 1] === 9)) to--;
  if (from === to) return -1;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = data[i]! - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
    if (n > Number.MAX_SAFE_INTEGER) return -1;
  }
  return n;
}

/** A header's value, trimmed (only for the rare headers whose value is needed as text). */
function value(data: Buffer, from: number, to: number): string {
  return data.toString('latin1', from, to).trim();
}

/** Parses one response at a time; {@link ResponseParser.reset} before each request. */
export class ResponseParser {
  /** Status code of the final (non-1xx) response. */
  status = 0;
  /** The raw `Retry-After` value, if the response had one. */
  retryAfter: string | undefined = undefined;
  /** Whether the connection may carry another request after this response. */
  keepAlive = true;
  /** Bytes of this response seen so far (0 means the server sent nothing yet). */
  received = 0;
  /** Why the last `feed` returned `error`. */
  error = '';

  #state: State = 'head';
  #pending: Buffer | undefined = undefined;
  #remaining = 0;
  #noBody = false;

  /** Prepares for the next response; `noBody` for responses to HEAD. */
  reset(noBody: boolean): void {
    this.status = 0;
    this.retryAfter = undefined;
    this.keepAlive = true;
    this.received = 0;
    this.error = '';
    this.#state = 'head';
    this.#pending = undefined;
    this.#remaining = 0;
    this.#noBody = noBody;
  }

  /** Feeds bytes from the socket. */
  feed(chunk: Buffer): ParseResult {
    this.received += chunk.length;
    let offset = 0;
    while (offset < chunk.length) {
      switch (this.#state) {
        case 'head':
          offset = this.#head(chunk, offset);
          break;
        case 'length': {
          const take = Math.min(this.#remaining, chunk.length - offset);
          this.#remaining -= take;
          offset += take;
          if (this.#remaining === 0) this.#state = 'done';
          break;
        }
        case 'chunk-size':
          offset = this.#chunkSize(chunk, offset);
          break;
        case 'chunk-data': {
          const take = Math.min(this.#remaining, chunk.length - offset);
          this.#remaining -= take;
          offset += take;
          if (this.#remaining === 0) this.#state = 'chunk-size';
          break;
        }
        case 'trailers':
          offset = this.#trailer(chunk, offset);
          break;
        case 'close':
          return 'more';
        case 'done':
          // Bytes after a complete response: the connection is out of step; do not reuse it.
          this.keepAlive = false;
          return 'done';
      }
      if (offset < 0) return offset === -1 ? 'more' : 'error';
    }
    return this.#state === 'done' ? 'done' : 'more';
  }

  /** The server closed the connection: ends a read-until-close body, else it is an error. */
  end(): ParseResult {
    if (this.#state === 'close') {
      this.#state = 'done';
      return 'done';
    }
    if (this.#state === 'done') return 'done';
    this.error = this.received === 0 ? 'closed before responding' : 'closed mid-response';
    return 'error';
  }

  /** Returns the next offset, -1 for "need more", -2 for an error. */
  #head(chunk: Buffer, offset: number): number {
    let data: Buffer;
    let base: number;
    if (this.#pending === undefined) {
      data = chunk;
      base = offset;
    } else {
      data = Buffer.concat([this.#pending, chunk.subarray(offset)]);
      base = 0;
    }
    const end = data.indexOf(crlfcrlf, base);
    if (end === -1) {
      if (data.length - base > maxHeadBytes) return this.#fail('response head too large');
      this.#pending = Buffer.from(data.subarray(base));
      return -1;
    }
    const consumed = end + 4 - base;
    const pendingLength = this.#pending?.length ?? 0;
    this.#pending = undefined;
    const fail = this.#parseHead(data, base, end);
    if (fail !== undefined) return this.#fail(fail);
    return offset + consumed - pendingLength;
  }

  /**
   * Reads the head in `data[start, end)` from the bytes themselves: at 20,000 responses a
   * second, a string per head and per line was the generator's largest allocation, and each
   * scavenge that garbage triggers is a pause in the schedule.
   */
  #parseHead(data: Buffer, start: number, end: number): string | undefined {
    if (end - start < 12 || !startsWith(data, start, httpPrefix)) return 'not an HTTP/1.x response';
    const status = digits(data, start + 9, start + 12);
    if (status < 100) return 'bad status line';
    const http10 = data[start + 7] === 48; // 'HTTP/1.0'
    let keepAlive = !http10;
    let length = -1;
    let chunked = false;
    let retryAfter: string | undefined;
    let lineStart = data.indexOf(13, start);
    while (lineStart !== -1 && lineStart < end) {
      lineStart += 2; // past CRLF
      let lineEnd = data.indexOf(13, lineStart);
      if (lineEnd === -1 || lineEnd > end) lineEnd = end;
      const colon = data.indexOf(58, lineStart); // ':'
      const nameLength = colon - lineStart;
      if (colon !== -1 && colon < lineEnd && nameLength > 0) {
        // Compare lengths first so most headers cost no byte comparison.
        switch (nameLength) {
          case 14:
            if (sameName(data, lineStart, contentLength)) {
              length = digits(data, colon + 1, lineEnd);
              if (length < 0) return 'bad content-length';
            }
            break;
          case 17:
            if (sameName(data, lineStart, transferEncoding)) {
              chunked = value(data, colon + 1, lineEnd)
                .toLowerCase()
                .includes('chunked');
            }
            break;
          case 10:
            if (sameName(data, lineStart, connection)) {
              const v = value(data, colon + 1, lineEnd).toLowerCase();
              if (v.includes('close')) keepAlive = false;
              else if (v.includes('keep-alive')) keepAlive = true;
            }
            break;
          case 11:
            if (sameName(data, lineStart, retryAfterName)) {
              retryAfter = value(data, colon + 1, lineEnd);
            }
            break;
        }
      }
      lineStart = lineEnd === end ? -1 : lineEnd;
    }
    if (status < 200 && status !== 101) {
      // An interim response (100 Continue, 103 Early Hints): the real one follows.
      this.#state = 'head';
      return undefined;
    }
    this.status = status;
    this.retryAfter = retryAfter;
    this.keepAlive = keepAlive;
    if (this.#noBody || status === 204 || status === 304 || status === 101) {
      this.#state = 'done';
    } else if (chunked) {
      this.#state = 'chunk-size';
    } else if (length >= 0) {
      this.#remaining = length;
      this.#state = length === 0 ? 'done' : 'length';
    } else {
      this.keepAlive = false;
      this.#state = 'close';
    }
    return undefined;
  }

  #chunkSize(chunk: Buffer, offset: number): number {
    const line = this.#line(chunk, offset);
    if (line === undefined) return -1;
    const size = Number.parseInt(line.text.split(';', 1)[0]!.trim(), 16);
    if (!Number.isSafeInteger(size) || size < 0) return this.#fail('bad chunk size');
    if (size === 0) this.#state = 'trailers';
    else {
      this.#remaining = size + 2; // the data and its CRLF
      this.#state = 'chunk-data';
    }
    return line.next;
  }

  #trailer(chunk: Buffer, offset: number): number {
    const line = this.#line(chunk, offset);
    if (line === undefined) return -1;
    if (line.text.length === 0) this.#state = 'done';
    return line.next;
  }

  /** One CRLF-terminated line, joined with bytes held from an earlier chunk. */
  #line(chunk: Buffer, offset: number): { text: string; next: number } | undefined {
    const newline = chunk.indexOf(10, offset);
    if (newline === -1) {
      const rest = chunk.subarray(offset);
      this.#pending =
        this.#pending === undefined ? Buffer.from(rest) : Buffer.concat([this.#pending, rest]);
      if (this.#pending.length > maxHeadBytes) this.#pending = this.#pending.subarray(0, 0);
      return undefined;
    }
    let text = chunk.toString('latin1', offset, newline);
    if (this.#pending !== undefined) {
      text = this.#pending.toString('latin1') + text;
      this.#pending = undefined;
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return { text, next: newline + 1 };
  }

  #fail(reason: string): number {
    this.error = reason;
    this.keepAlive = false;
    return -2;
  }
}
