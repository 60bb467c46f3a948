// setKnownField on node:http's own responses: the field reads back, is replaced, removed and
// sent exactly as one set with setHeader; a response whose setHeader is wrapped gets it through
// the wrapper; and a response already sent throws as setHeader does.
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { setKnownField } from './set-known-field.js';

const response = () => new ServerResponse(new IncomingMessage(new Socket()));
const head = (res: ServerResponse) => (res as unknown as { _header: string })._header;

describe('setKnownField', () => {
  it('is what setHeader would have done, on the wire and to every reader', () => {
    const known = response();
    const plain = response();
    for (const res of [known, plain]) res.setHeader('Content-Type', 'text/plain');
    setKnownField(known, 'ratelimit-policy', '"api";q=10;w=1');
    setKnownField(known, 'ratelimit', '"api";r=9;t=1');
    plain.setHeader('ratelimit-policy', '"api";q=10;w=1');
    plain.setHeader('ratelimit', '"api";r=9;t=1');
    expect(known.getHeaders()).toEqual(plain.getHeaders());
    expect(known.getHeader('RateLimit')).toBe('"api";r=9;t=1');
    expect(known.hasHeader('ratelimit-policy')).toBe(true);
    for (const res of [known, plain]) res.writeHead(200);
    expect(head(known)).toBe(head(plain));
  });

  it('a field set before by the handler is replaced; one set after replaces it; removeHeader removes it', () => {
    const res = response();
    res.setHeader('RateLimit', 'old');
    setKnownField(res, 'ratelimit', 'new');
    expect(res.getHeader('ratelimit')).toBe('new');
    res.setHeader('RateLimit', 'mine');
    expect(res.getHeader('ratelimit')).toBe('mine');
    res.removeHeader('ratelimit');
    expect(res.hasHeader('ratelimit')).toBe(false);
  });

  it('goes through a wrapped setHeader, so whoever watches it sees the field', () => {
    const res = response();
    const seen: string[] = [];
    const original = res.setHeader.bind(res);
    res.setHeader = (name, value) => {
      seen.push(name);
      return original(name, value);
    };
    setKnownField(res, 'ratelimit', '"api";r=1;t=1');
    expect(seen).toEqual(['ratelimit']);
    expect(res.getHeader('ratelimit')).toBe('"api";r=1;t=1');
  });

  it('throws on a response already sent, as setHeader does', () => {
    const res = response();
    res.writeHead(200);
    expect(() => setKnownField(res, 'ratelimit', 'x')).toThrow(/headers after they are sent/i);
  });
});
