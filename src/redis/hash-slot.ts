/**
 * The Redis Cluster slot of a key: CRC16 (XMODEM: polynomial 0x1021, initial 0, unreflected)
 * of the key's UTF-8 bytes, or of its hash tag when it has one, modulo 16384. The store needs
 * it on a cluster only, to batch together just the calls whose keys share a slot.
 *
 * @module
 */
import { hashTag } from './keys.js';

const table = new Uint16Array(256);
for (let i = 0; i < 256; i++) {
  let crc = i << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  table[i] = crc & 0xffff;
}
const encoder = new TextEncoder();

/** CRC16/XMODEM of `bytes`. */
export function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) crc = ((crc << 8) & 0xffff) ^ table[((crc >> 8) ^ b) & 0xff]!;
  return crc;
}

/** The cluster slot (0–16383) of `key`, hash tags honoured as Redis does. */
export function hashSlot(key: string): number {
  return crc16(encoder.encode(hashTag(key) ?? key)) & 0x3fff;
}
