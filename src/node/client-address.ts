/**
 * The default client key: the socket's remote address. Forwarded headers are read only when
 * `trustProxy` says so, and a malformed address falls back to the socket's.
 *
 * @module
 */
import type { IncomingMessage } from 'node:http';

/**
 * Whether to believe `X-Forwarded-For`: `false` (default) never; `true` the left-most address
 * (every hop is a trusted proxy); a number `n` the address `n` hops from the right (that many
 * trusted proxies in front of this server).
 */
export type TrustProxy = boolean | number;

/** Characters an IPv4/IPv6 address (with zone) may contain, and its longest form. */
const addressPattern = /^[0-9A-Fa-f.:%a-zA-Z]{1,64}$/;

/** What node:net keeps of a connected socket's peer once `remoteAddress` has been read. */
interface PeerCache {
  readonly _peername?: { readonly address?: unknown } | undefined;
}

/**
 * The socket's remote address. `remoteAddress` asks the socket's handle on every read, through
 * two getters whose symbol-keyed loads V8 cannot specialise (about 1 % of a refusal, S8 in
 * BENCHMARKS.md); once asked, node:net keeps the answer on the socket and returns that same
 * object from then on, so read it there and ask only when it is not yet there.
 */
function peerAddress(req: IncomingMessage): string {
  const socket = req.socket;
  const address = (socket as unknown as PeerCache)._peername?.address;
  return typeof address === 'string' ? address : (socket.remoteAddress ?? 'unknown');
}

/** The client address of `req` under `trustProxy`. */
export function clientAddress(req: IncomingMessage, trustProxy: TrustProxy): string {
  const socketAddress = peerAddress(req);
  if (trustProxy === false || trustProxy === 0) return socketAddress;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (raw === undefined || raw.length === 0 || raw.length > 2048) return socketAddress;
  const hops = raw.split(',', 64);
  const index = trustProxy === true ? 0 : hops.length - trustProxy;
  const candidate = index >= 0 ? hops[index]?.trim() : undefined;
  return candidate !== undefined && addressPattern.test(candidate) ? candidate : socketAddress;
}
