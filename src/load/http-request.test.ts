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
      /valid header names, got "a b"/,
    );
    expect(() => serialiseRequest({ ...base, headers: { a: 'x\r\ny: z' } }, 'g')).toThrow(
      /`g\.headers\.a`/,
    );
    expect(() => serialiseRequest({ ...base, headers: { Connection: 'close' } }, 'g')).toThrow(
      /the generator sets them/,
    );
  });
});
