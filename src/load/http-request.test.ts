import { describe, expect, it } from 'vitest';
import { serialiseRequest } from './http-request.js';

const base = {
  method: 'GET',
  path: '/work?x=1',
  host: '127.0.0.1:8080',
  headers: {},
  body: undefined,
  close: false,
};

describe('serialiseRequest', () => {
  it('writes a minimal keep-alive GET', () => {
    expect(serialiseRequest(base, 'group').toString()).toBe(
      'GET /work?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n',
    );
  });

  it('adds headers, a body with its length, and Connection: close when asked', () => {
    const text = serialiseRequest(
      {
        ...base,
        method: 'POST',
        headers: { 'x-client': 'a' },
        body: Buffer.from('{}'),
        close: true,
      },
      'group',
    ).toString();
    expect(text).toBe(
      'POST /work?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nx-client: a\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
  });

  it('keeps a Host header given by the user', () => {
    const text = serialiseRequest({ ...base, headers: { host: 'example.test' } }, 'g').toString();
    expect(text).toBe('GET /work?x=1 HTTP/1.1\r\nhost: example.test\r\n\r\n');
  });

  it('refuses bad methods, paths, header names and values, naming the option', () => {
    expect(() => serialiseRequest({ ...base, method: 'G T' }, 'groups[0]')).toThrow(
      /`groups\[0\]\.method`/,
    );
    expect(() => serialiseRequest({ ...base, path: 'nope' }, 'g')).toThrow(/`g\.path`/);
    expect(() => serialiseRequest({ ...base, headers: { 'a b': 'x' } }, 'g')).toThrow(
      /valid header names, RFC 9110 tokens \(U\+0020 at index 1 is not allowed\), got "a b"/,
    );
    expect(() => serialiseRequest({ ...base, headers: { a: 'x\r\ny: z' } }, 'g')).toThrow(
      /`g\.headers\.a`/,
    );
    expect(() => serialiseRequest({ ...base, headers: { Connection: 'close' } }, 'g')).toThrow(
      /the generator sets them/,
    );
  });

  it('refuses characters above U+00FF that latin1 would turn into CR or LF (header injection)', () => {
    // U+010D and U+010A lose their high byte in latin1: 0x0D (CR) and 0x0A (LF).
    for (const value of ['a\u010d\u010ax-injected: 1', '\u010a', 'x\u2028y', '\ud800']) {
      expect(() => serialiseRequest({ ...base, headers: { 'x-a': value } }, 'g')).toThrow(
        /`g\.headers\.x-a` to be a header value of visible ASCII, spaces, tabs or U\+0080–U\+00FF/,
      );
    }
    for (const path of ['/a\u010d\u010aHost: evil', '/a b', '/a\u0085', '/\x7f']) {
      expect(() => serialiseRequest({ ...base, path }, 'g')).toThrow(/`g\.path`/);
    }
    expect(() => serialiseRequest({ ...base, method: 'G\u010aET' }, 'g')).toThrow(/`g\.method`/);
  });

  it('refuses controls, DEL, and spaces at either end of a value; keeps obs-text as latin1', () => {
    for (const value of ['a\x00', 'a\x7f', 'a\x01b', ' a', 'a\t']) {
      expect(() => serialiseRequest({ ...base, headers: { 'x-a': value } }, 'g')).toThrow(
        /`g\.headers\.x-a`/,
      );
    }
    const bytes = serialiseRequest(
      { ...base, headers: { 'x-a': 'caf\u00e9 \t!', 'x-b': '' } },
      'g',
    );
    expect(bytes.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x09, 0x21]))).toBe(true);
    expect(bytes.toString('latin1')).toContain('\r\nx-b: \r\n');
  });

  it('refuses a header name given twice, in any case', () => {
    expect(() => serialiseRequest({ ...base, headers: { Host: 'a', host: 'b' } }, 'g')).toThrow(
      /`g\.headers` to be each header name once/,
    );
  });
});
