/**
 * The default client key: the socket's remote address. `X-Forwarded-For` is read only when
 * `trustProxy` says so, and then only the entry a trusted proxy wrote.
 *
 * Each proxy appends the address it received the connection from, so the entries a client can
 * write are on the left and the ones trusted proxies wrote are on the right. The header is read
 * from the right, entry by entry, and nothing left of the trusted position is ever looked at:
 * however many entries a client adds (say, seventy copies of a victim's address), the key is
 * the address its own first trusted proxy saw. Anything at that position that is not an IP
 * address falls back to the socket's address; a client never picks an arbitrary key.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * Whether to believe `X-Forwarded-For`: `false` or `0` (the default) never; a number `n`: `n`
 * trusted proxies stand in front of this server, and the key is the `n`-th entry from the
 * right (the address the outermost trusted proxy saw); `true` is the same as `1`. `true` never
 * means the left-most entry: any client can write that one.
 */
export type TrustProxy = boolean | number;

/**
 * Longest entry a proxy writes: an IPv6 address in its longest text form, in brackets, with a
 * port. Anything longer was not written by a proxy, and is not read any further.
 */
const maxEntryLength = 64;

/** What node:net keeps of a connected socket's peer once `remoteAddress` has been read. */
interface PeerCache {
  readonly _peername?: { readonly address?: unknown } | undefined;
}

/**
 * The socket's remote address, an IPv4-mapped one (`::ffff:1.2.3.4`, what a dual-stack server
 * sees of IPv4 clients) as its IPv4 form. `remoteAddress` asks the socket's handle on every read, through
 * two getters whose symbol-keyed loads V8 cannot specialise (a visible share of a refusal's
 * cost: S8 in BENCHMARKS.md); once asked, node:net keeps the answer on the socket and returns that same
 * object from then on, so read it there and ask only when it is not yet there.
 */
function peerAddress(req: IncomingMessage): string {
  const socket = req.socket;
  const cached = (socket as unknown as PeerCache)._peername?.address;
  const address = typeof cached === 'string' ? cached : (socket.remoteAddress ?? 'unknown');
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/**
 * The client address of `req` under `trustProxy`: the socket's address, or the forwarded
 * address at the trusted position when that is an IP address. An IPv4-mapped socket address
 * becomes its IPv4 form. Forwarded addresses are normalised: a port (`1.2.3.4:80`, `[2001:db8::1]:80`) and brackets are dropped, IPv6 is
 * lower-cased, and an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) becomes its IPv4 form.
 */
export function clientAddress(req: IncomingMessage, trustProxy: TrustProxy): string {
  const socketAddress = peerAddress(req);
  if (trustProxy === false || trustProxy === 0) return socketAddress;
  const hops = trustProxy === true ? 1 : trustProxy;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (raw === undefined) return socketAddress;
  const entry = entryFromRight(raw, hops);
  const address = entry === undefined ? undefined : normalAddress(entry);
  return address ?? socketAddress;
}

/** The `n`-th comma-separated entry from the right, trimmed; undefined if absent or too long. */
function entryFromRight(raw: string, n: number): string | undefined {
  let end = raw.length;
  for (let seen = 1; ; seen++) {
    // (`lastIndexOf` reads a negative start as 0: at the very start there is no comma left.)
    const comma = end === 0 ? -1 : raw.lastIndexOf(',', end - 1);
    // The entry is raw[comma + 1, end): a long one was not written by a proxy.
    if (end - comma - 1 > maxEntryLength) return undefined;
    if (seen === n) return raw.slice(comma + 1, end).trim();
    // Fewer entries than trusted proxies: the request did not come through them all.
    if (comma === -1) return undefined;
    end = comma;
  }
}

/** `text` as a normalised IP address, or undefined if it is not one. */
function normalAddress(text: string): string | undefined {
  let address = text;
  if (address.startsWith('[')) {
    const close = address.indexOf(']');
    if (close === -1) return undefined;
    const rest = address.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    address = address.slice(1, close);
    if (isIP(address) !== 6) return undefined;
  } else if (/^[\d.]+:\d{1,5}$/.test(address)) {
    address = address.slice(0, address.indexOf(':'));
  }
  switch (isIP(address)) {
    case 4:
      return address;
    case 6: {
      // A zone (`fe80::1%eth0`) names an interface of the proxy's host, and is free text.
      if (address.includes('%')) return undefined;
      const lower = address.toLowerCase();
      const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
      return mapped !== null ? mapped[1] : lower;
    }
    default:
      return undefined;
  }
}

/**
 * The client key of an address from {@link clientAddress}: an IPv4 address as it is; an IPv6
 * address as its network of `ipv6Prefix` bits (`2001:db8:0:1200:0:0:0:0/56` for any address in
 * that /56), because one subscriber is handed a whole prefix (a /56 or a /64, often) and can
 * rotate through its addresses at will — keyed per address, each would get a fresh quota.
 * `ipv6Prefix` 128 keys each address apart. Anything that is not an IPv6 address (`unknown`)
 * is returned as it is.
 */
export function clientKey(address: string, ipv6Prefix: number): string {
  if (!address.includes(':')) return address;
  const groups = ipv6Groups(address);
  if (groups === undefined) return address;
  let text = '';
  for (let i = 0; i < 8; i++) {
    const bits = Math.min(Math.max(ipv6Prefix - 16 * i, 0), 16);
    const masked = groups[i]! & ((0xffff << (16 - bits)) & 0xffff);
    text += (i === 0 ? '' : ':') + masked.toString(16);
  }
  return `${text}/${ipv6Prefix}`;
}

/** The eight 16-bit groups of an IPv6 address in text, or undefined if it is not one. */
export function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  const halves = address.split('::');
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const out: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        // An IPv4 tail (`64:ff9b::192.0.2.1`): its four bytes are the last two groups.
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number];
        out.push((a << 8) | b, (c << 8) | d);
      } else {
        out.push(parseInt(piece, 16));
      }
    }
    return out;
  };
  const head = parse(halves[0]!);
  if (halves.length === 1) return head.length === 8 ? head : undefined;
  const tail = parse(halves[1]!);
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
