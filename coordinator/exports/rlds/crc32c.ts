/**
 * CRC-32C (Castagnoli), the checksum TFRecord files carry: reflected polynomial 0x82F63B78, initial
 * value and final XOR 0xFFFFFFFF, one table lookup per byte. `maskedCrc32c` is TFRecord's masking
 * (tensorflow/core/lib/hash/crc32c.h `Mask`), which keeps a CRC of data that embeds CRCs from being
 * mistaken for one.
 */

const POLYNOMIAL_REFLECTED = 0x82f63b78;
const MASK_DELTA = 0xa282ead8;

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL_REFLECTED : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C of `data`; crc32c("123456789") is 0xE3069283. */
export function crc32c(data: Uint8Array): number {
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = TABLE[(crc ^ data[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC-32C: rotate right by 15 bits, then add 0xa282ead8 (mod 2^32). */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0;
}
