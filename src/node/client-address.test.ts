import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientAddress, clientKey, type TrustProxy } from './client-address.js';

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

describe('clientKey', () => {
  it('keys an IPv6 client by its /56: addresses rotating inside it share a key', () => {
    const inside = [
      '2001:db8:1:1200::1',
      '2001:db8:1:12ff:ffff:ffff:ffff:ffff',
      '2001:db8:1:1234::abcd',
    ];
    const keys = new Set(inside.map((a) => clientKey(a, 56)));
    expect([...keys]).toEqual(['2001:db8:1:1200:0:0:0:0/56']);
    // One bit past the prefix's end is another subscriber.
    expect(clientKey('2001:db8:1:1300::1', 56)).not.toBe(clientKey('2001:db8:1:1200::1', 56));
    expect(clientKey('2001:db8:2:1200::1', 56)).not.toBe(clientKey('2001:db8:1:1200::1', 56));
  });

  it('takes other prefixes, 128 keeping every address apart', () => {
    expect(clientKey('2001:db8:1:1234::abcd', 64)).toBe('2001:db8:1:1234:0:0:0:0/64');
    expect(clientKey('2001:db8:1:1234::abcd', 128)).toBe('2001:db8:1:1234:0:0:0:abcd/128');
    expect(clientKey('2001:db8:1:1234::abcd', 1)).toBe('0:0:0:0:0:0:0:0/1');
    expect(clientKey('::1', 56)).toBe('0:0:0:0:0:0:0:0/56');
    expect(clientKey('64:ff9b::192.0.2.1', 128)).toBe('64:ff9b:0:0:0:0:c000:201/128');
  });

  it('leaves IPv4 addresses, and anything that is not IPv6, as they are', () => {
    expect(clientKey('203.0.113.9', 56)).toBe('203.0.113.9');
    expect(clientKey('unknown', 56)).toBe('unknown');
    expect(clientKey('not:an:address', 56)).toBe('not:an:address');
  });

  it('sees an IPv4 client of a dual-stack server as its IPv4 address', () => {
    const req = {
      socket: { remoteAddress: '::ffff:198.51.100.7' },
      headers: {},
    } as unknown as IncomingMessage;
    expect(clientKey(clientAddress(req, false), 56)).toBe('198.51.100.7');
  });

  it('property: every address of a /56 has the key of its first address', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (g) => {
        const address = g.map((x) => x.toString(16)).join(':');
        const first = [g[0], g[1], g[2], g[3]! & 0xff00, 0, 0, 0, 0]
          .map((x) => x!.toString(16))
          .join(':');
        expect(clientKey(address, 56)).toBe(clientKey(first, 56));
        expect(clientKey(address, 56)).toBe(`${first}/56`);
      }),
    );
  });
});
