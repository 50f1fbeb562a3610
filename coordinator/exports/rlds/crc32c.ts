/**
 * CRC-32C (Castagnoli), the checksum TFRecord files carry: reflected polynomial 0x82F63B78, initial
 * value and final XOR 0xFFFFFFFF. Computed natively by @node-rs/crc32 (SSE 4.2 / ARMv8 CRC
 * instructions; prebuilt binaries in npm optional packages, no build or download at install): the
 * JavaScript table loop it replaces, one lookup per byte, was 18% of an RLDS export's CPU.
 * `maskedCrc32c` is TFRecord's masking (tensorflow/core/lib/hash/crc32c.h `Mask`), which keeps a
 * CRC of data that embeds CRCs from being mistaken for one. test/unit/export-rlds.spec.ts checks
 * every record against a bitwise CRC-32C written from the definition.
 */
import { crc32c as nativeCrc32c } from "@node-rs/crc32";

const MASK_DELTA = 0xa282ead8;

/**
 * CRC-32C of `data`; crc32c("123456789") is 0xE3069283. `previous`, the CRC of the bytes before
 * `data`, continues it: crc32c(b, crc32c(a)) is the CRC of a followed by b.
 */
export function crc32c(data: Uint8Array, previous = 0): number {
  const buffer = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return nativeCrc32c(buffer, previous) >>> 0;
}

/** TFRecord's masking of a CRC-32C: rotate right by 15 bits, then add 0xa282ead8 (mod 2^32). */
export function maskCrc32c(crc: number): number {
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}

/** TFRecord's masked CRC-32C of `data`. */
export function maskedCrc32c(data: Uint8Array): number {
  return maskCrc32c(crc32c(data));
}
