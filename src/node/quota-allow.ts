/**
 * A quota's `allow` list: client keys, IP addresses and CIDR ranges (IPv4 and IPv6) whose
 * requests the quota never counts. Keys are matched exactly; addresses and ranges against the
 * client's address as the default key reads it (IPv4-mapped IPv6 as IPv4), whatever key the
 * guard uses. Parsed once, at construction; an entry that looks like a range but is not one is
 * a `SpillwayConfigError`, never a key that silently matches nothing.
 *
 * @module
 */
import { isIP } from 'node:net';
import { SpillwayConfigError } from '../index.js';
import { ipv6Groups } from './client-address.js';

interface Range6 {
  readonly groups: readonly number[];
  readonly bits: number;
}

/** A parsed allow list. */
export class AllowList {
  /** Whether any entry is an address or a range (the client's address is read only then). */
  readonly hasRanges: boolean;
  readonly #keys = new Set<string>();
  /** IPv4 ranges as [network, mask] pairs, unsigned. */
  readonly #v4: number[] = [];
  readonly #v6: Range6[] = [];

  constructor(entries: readonly unknown[], option: string) {
    entries.forEach((entry, i) => this.#add(entry, `${option}[${i}]`));
    this.hasRanges = this.#v4.length > 0 || this.#v6.length > 0;
  }

  /** Whether `key` is one of the keys listed. */
  hasKey(key: string): boolean {
    return this.#keys.size > 0 && this.#keys.has(key);
  }

  /** Whether `address` (as `clientAddress` gives it) is in a listed range. */
  covers(address: string): boolean {
    if (!address.includes(':')) {
      const v = ipv4Number(address);
      if (v === undefined) return false;
      const r = this.#v4;
      for (let i = 0; i < r.length; i += 2) if ((v & r[i + 1]!) >>> 0 === r[i]) return true;
      return false;
    }
    if (this.#v6.length === 0) return false;
    const groups = ipv6Groups(address);
    return groups !== undefined && this.#v6.some((range) => inRange6(groups, range));
  }

  #add(entry: unknown, option: string): void {
    if (typeof entry !== 'string' || entry.length === 0 || entry.length > 256) {
      throw new SpillwayConfigError(option, 'a client key, an IP address or a CIDR range', entry);
    }
    const slash = entry.lastIndexOf('/');
    const base = slash === -1 ? entry : entry.slice(0, slash);
    const kind = isIP(base);
    const bitsText = slash === -1 ? undefined : entry.slice(slash + 1);
    if (kind === 0) {
      // `10.0.0/8` or `2001:db8::g/32` is a mistyped range, not a key.
      if (bitsText !== undefined && /^\d+$/.test(bitsText) && /^[\d.:a-fA-F]+$/.test(base)) {
        throw new SpillwayConfigError(option, 'a CIDR range of a valid IP address', entry);
      }
      this.#keys.add(entry);
      return;
    }
    const most = kind === 4 ? 32 : 128;
    const bits = bitsText === undefined ? most : Number(bitsText);
    if (bitsText !== undefined && !/^\d{1,3}$/.test(bitsText)) {
      throw new SpillwayConfigError(option, `a CIDR range (prefix 0 to ${most})`, entry);
    }
    if (!(bits <= most)) {
      throw new SpillwayConfigError(option, `a CIDR range (prefix 0 to ${most})`, entry);
    }
    if (kind === 4) {
      this.#addV4(ipv4Number(base)!, bits);
      return;
    }
    const groups = ipv6Groups(base.toLowerCase())!;
    // `::ffff:10.0.0.0/104` is an IPv4 range written as IPv6: clients arrive as IPv4.
    const mapped = groups.slice(0, 6).every((g, i) => g === (i === 5 ? 0xffff : 0));
    if (mapped && bits >= 96) {
      this.#addV4(((groups[6]! << 16) | groups[7]!) >>> 0, bits - 96);
      return;
    }
    this.#v6.push({ groups, bits });
  }

  #addV4(address: number, bits: number): void {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    this.#v4.push((address & mask) >>> 0, mask);
  }
}

/** A dotted IPv4 address as an unsigned number; undefined if it is not one. */
function ipv4Number(address: string): number | undefined {
  const parts = address.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0;
  for (const part of parts) {
    const n = Number(part);
    if (!(n >= 0 && n <= 255) || part.length === 0) return undefined;
    v = v * 256 + n;
  }
  return v;
}

function inRange6(groups: readonly number[], range: Range6): boolean {
  for (let i = 0; i < 8; i++) {
    const bits = Math.min(Math.max(range.bits - 16 * i, 0), 16);
    if (bits === 0) return true;
    const mask = (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== (range.groups[i]! & mask)) return false;
  }
  return true;
}
