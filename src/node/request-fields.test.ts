import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { requestHeader } from './request-fields.js';

/** A stand-in request with only parsed headers (no raw list), as tests and frameworks make. */
const standIn = (headers: Record<string, string | string[]>) =>
  ({ headers }) as unknown as IncomingMessage;

/** The request a real node:http server receives for `rawHeaders` (name, value pairs). */
async function received(rawHeaders: readonly string[]): Promise<IncomingMessage> {
  let got!: IncomingMessage;
  const server = createServer((req, res) => {
    got = req;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    // A raw list is sent as written (names' case, repeats); node:http then adds no Host.
    const headers = ['Host', `127.0.0.1:${port}`, ...rawHeaders];
    const req = request({ port, host: '127.0.0.1', headers }, (res) => {
      res.resume().on('end', resolve);
    });
    req.on('error', reject).end();
  });
  await new Promise((resolve) => server.close(resolve));
  return got;
}

describe('requestHeader', () => {
  it('reads a header from the raw list, whatever the case of either name', async () => {
    const req = await received(['X-Api-Key', 'k-1', 'Accept', '*/*']);
    expect(requestHeader(req, 'x-api-key')).toBe('k-1');
    expect(requestHeader(req, 'X-API-KEY')).toBe('k-1');
    expect(requestHeader(req, 'x-tenant')).toBeUndefined();
  });

  it('reads a header sent twice as absent: ambiguous, so the request keys by its address', async () => {
    const req = await received(['X-Api-Key', 'mine', 'x-api-key', 'someone-else']);
    expect(requestHeader(req, 'x-api-key')).toBeUndefined();
  });

  it('falls back to the parsed headers of a request without a raw list', () => {
    expect(requestHeader(standIn({ 'x-api-key': 'k-2' }), 'X-Api-Key')).toBe('k-2');
    expect(requestHeader(standIn({ 'x-api-key': ['a', 'b'] }), 'x-api-key')).toBeUndefined();
    expect(requestHeader(standIn({}), 'x-api-key')).toBeUndefined();
  });
});
