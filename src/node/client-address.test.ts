import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAddress, type TrustProxy } from './client-address.js';

const socketAddress = '10.0.0.1';

/** The two fields `clientAddress` reads, as node:http fills them in. */
function request(forwardedFor?: string | string[]): IncomingMessage {
  return {
    socket: { remoteAddress: socketAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  } as unknown as IncomingMessage;
}

const key = (header: string | string[] | undefined, trust: TrustProxy) =>
  clientAddress(request(header), trust);

describe('clientAddress', () => {
  it('is the socket’s address unless told to trust proxies', () => {
    for (const trust of [false, 0]) expect(key('203.0.113.9', trust)).toBe(socketAddress);
    expect(key(undefined, 1)).toBe(socketAddress);
  });

  it('takes the n-th entry from the right, and true means one proxy', () => {
    const header = '198.51.100.1, 203.0.113.9, 10.0.0.2';
    expect(key(header, 1)).toBe('10.0.0.2');
    expect(key(header, true)).toBe('10.0.0.2');
    expect(key(header, 2)).toBe('203.0.113.9');
    expect(key(header, 3)).toBe('198.51.100.1');
    // Fewer entries than trusted proxies: the request went around them.
    expect(key(header, 4)).toBe(socketAddress);
  });

  it('never looks left of the trusted position, however many entries a client adds', () => {
    const victim = '203.0.113.50';
    const attacker = '198.51.100.7';
    expect(key(`${Array<string>(70).fill(victim).join(', ')}, ${attacker}`, 1)).toBe(attacker);
    expect(key(`${'x'.repeat(10_000)}, ${attacker}`, 1)).toBe(attacker);
    expect(key([`${victim}, ${victim}`, attacker], 1)).toBe(attacker);
  });

  it('falls back to the socket for anything at that position that is not an IP address', () => {
    for (const entry of [
      'ZZZZnotAnAddress',
      '',
      ' ',
      'unknown',
      '1.2.3.4.5',
      '01.2.3.4',
      'fe80::1%eth0',
      '[::1',
      '[::1]x',
      '[1.2.3.4]',
      `${'0'.repeat(60)}1.2.3.4`,
    ]) {
      expect(key(`203.0.113.50, ${entry}`, 1)).toBe(socketAddress);
    }
    expect(key(',,,', Number.MAX_SAFE_INTEGER)).toBe(socketAddress);
  });

  it('drops ports and brackets, lower-cases IPv6 and unmaps IPv4-mapped addresses', () => {
    expect(key('1.2.3.4:8080', 1)).toBe('1.2.3.4');
    expect(key('[2001:DB8::1]:443', 1)).toBe('2001:db8::1');
    expect(key('[2001:db8::1]', 1)).toBe('2001:db8::1');
    expect(key('::FFFF:192.0.2.1', 1)).toBe('192.0.2.1');
    expect(key('[::ffff:192.0.2.1]:80', 1)).toBe('192.0.2.1');
  });

  it('property: a proxy chain’s key is the address the first trusted proxy saw, whatever the client wrote', () => {
    const address = fc.oneof(fc.ipV4(), fc.ipV6());
    // What a client may send: any text, or a long list of addresses (a victim's, say).
    const forgedList = fc
      .array(fc.oneof(address, fc.string({ maxLength: 12 })), { maxLength: 100, size: 'max' })
      .map((list) => list.join(', '));
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 300 }), forgedList),
        fc.array(address, { minLength: 1, maxLength: 5 }),
        (forged, hops) => {
          // Each trusted proxy appends the address it received the connection from.
          const header = [forged, ...hops].join(', ');
          expect(key(header, hops.length)).toBe(normalised(hops[0]!));
        },
      ),
    );
  });

  it('property: the key is the socket’s address or an IP address from the trusted entry', () => {
    const entry = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.constant('203.0.113.50'),
      fc.string({ maxLength: 80 }),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF.:[]% ,'), maxLength: 60 }),
    );
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 20 }),
        fc.oneof(fc.boolean(), fc.integer({ min: 0, max: 25 })),
        (entries, trust) => {
          const header = entries.join(',');
          const got = key(header, trust);
          if (got === socketAddress) return;
          expect(isIP(got)).not.toBe(0);
          const n = trust === true ? 1 : Number(trust);
          const trusted = header.split(',').at(-n)!.trim().toLowerCase();
          expect(trusted).toContain(got);
        },
      ),
    );
  });
});

/** How a forwarded address reads as a key. */
function normalised(address: string): string {
  const lower = address.toLowerCase();
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower)?.[1] ?? lower;
}
