import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ResponseParser } from './response-parser.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

function parse(text: string, noBody = false): ResponseParser & { result: string } {
  const parser = new ResponseParser();
  parser.reset(noBody);
  const result = parser.feed(b(text));
  return Object.assign(parser, { result });
}

describe('ResponseParser', () => {
  it('parses a Content-Length response and keeps the connection', () => {
    const p = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nDate: x\r\n\r\nok');
    expect(p.result).toBe('done');
    expect(p.status).toBe(200);
    expect(p.keepAlive).toBe(true);
    expect(p.retryAfter).toBeUndefined();
  });

  it('reads Retry-After and Connection: close, whatever their case', () => {
    const p = parse(
      'HTTP/1.1 503 Busy\r\nretry-AFTER:  2 \r\nCONNECTION: Close\r\ncontent-length: 0\r\n\r\n',
    );
    expect(p.result).toBe('done');
    expect(p.status).toBe(503);
    expect(p.retryAfter).toBe('2');
    expect(p.keepAlive).toBe(false);
  });

  it('waits for the whole body, across chunks', () => {
    const parser = new ResponseParser();
    parser.reset(false);
    expect(parser.feed(b('HTTP/1.1 429 Too Many\r\nContent-Len'))).toBe('more');
    expect(parser.feed(b('gth: 5\r\n\r\nab'))).toBe('more');
    expect(parser.feed(b('cde'))).toBe('done');
    expect(parser.status).toBe(429);
  });

  it('parses chunked bodies, chunk extensions and trailers', () => {
    const body = '4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: y\r\n\r\n';
    const p = parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${body}`);
    expect(p.result).toBe('done');
    expect(p.keepAlive).toBe(true);
  });

  it('skips interim 1xx responses', () => {
    const p = parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n',
    );
    expect(p.result).toBe('done');
    expect(p.status).toBe(201);
  });

  it('knows which responses have no body: HEAD, 204, 304', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n', true).result).toBe('done');
    expect(parse('HTTP/1.1 204 No Content\r\n\r\n').result).toBe('done');
    expect(parse('HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n').result).toBe('done');
  });

  it('reads until close when there is no framing, and does not reuse the connection', () => {
    const parser = new ResponseParser();
    parser.reset(false);
    expect(parser.feed(b('HTTP/1.0 200 OK\r\n\r\nhello'))).toBe('more');
    expect(parser.keepAlive).toBe(false);
    expect(parser.end()).toBe('done');
  });

  it('HTTP/1.0 closes unless it says keep-alive', () => {
    expect(parse('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n').keepAlive).toBe(false);
    expect(
      parse('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n').keepAlive,
    ).toBe(true);
  });

  it('a close before or during the response is an error that says which', () => {
    const parser = new ResponseParser();
    parser.reset(false);
    expect(parser.end()).toBe('error');
    expect(parser.error).toBe('closed before responding');
    parser.reset(false);
    parser.feed(b('HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nab'));
    expect(parser.end()).toBe('error');
    expect(parser.error).toBe('closed mid-response');
  });

  it('rejects garbage', () => {
    expect(parse('SSH-2.0-OpenSSH\r\n\r\n').result).toBe('error');
    expect(parse('HTTP/1.1 abc OK\r\n\r\n').result).toBe('error');
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n').result).toBe('error');
    expect(parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').result).toBe(
      'error',
    );
  });

  it('bytes after a complete response mark the connection as not reusable', () => {
    const p = parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK');
    expect(p.result).toBe('done');
    expect(p.keepAlive).toBe(false);
  });

  it('gives the same answer however the bytes are split (property)', () => {
    const responses = [
      'HTTP/1.1 200 OK\r\nContent-Length: 11\r\nRetry-After: 3\r\n\r\nhello world',
      'HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\nRetry-After: 1\r\n\r\n3\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\n',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 429 Slow\r\nRetry-After: 7\r\nContent-Length: 3\r\n\r\nxyz',
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...responses),
        fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 20 }),
        (text, cuts) => {
          const bytes = b(text);
          const points = [...new Set(cuts.map((c) => c % bytes.length))].sort((x, y) => x - y);
          const parser = new ResponseParser();
          parser.reset(false);
          let result = 'more';
          let from = 0;
          for (const point of [...points, bytes.length]) {
            if (point <= from) continue;
            result = parser.feed(bytes.subarray(from, point));
            from = point;
            if (result !== 'more') break;
          }
          const whole = parse(text);
          expect(result).toBe('done');
          expect(parser.status).toBe(whole.status);
          expect(parser.retryAfter).toBe(whole.retryAfter);
          expect(parser.keepAlive).toBe(true);
        },
      ),
    );
  });
});
