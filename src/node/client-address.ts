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

/** The client address of `req` under `trustProxy`. */
export function clientAddress(req: IncomingMessage, trustProxy: TrustProxy): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (trustProxy === false || trustProxy === 0) return socketAddress;
  const header = req.headers['x-forwarded-for'];
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (raw === undefined || raw.length === 0 || raw.length > 2048) return socketAddress;
  const hops = raw.split(',', 64);
  const index = trustProxy === true ? 0 : hops.length - trustProxy;
  const candidate = index >= 0 ? hops[index]?.trim() : undefined;
  return candidate !== undefined && addressPattern.test(candidate) ? candidate : socketAddress;
}
