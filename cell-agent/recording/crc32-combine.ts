/**
 * CRC-32 (the zlib / MCAP polynomial) of two byte ranges joined, from each range's CRC and the second
 * one's length: zlib's crc32_combine (multiplication by x^(8 * length) modulo the polynomial, in
 * O(log length) steps), which Node does not expose. The recorder's worker computes a chunk's CRCs
 * beside its compression and the writer joins them into the data section's CRC, instead of passing
 * over the bytes again on the agent's main thread.
 */
const POLY = 0xedb88320;

/** a * b modulo the polynomial, both in zlib's reflected representation. */
function multiplyModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p = (p ^ b) >>> 0;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? ((b >>> 1) ^ POLY) >>> 0 : b >>> 1;
  }
  return p;
}

/** x^(2^k) modulo the polynomial, k = 0..31. */
const X2N = (() => {
  const table: number[] = [];
  let p = 0x40000000; // x^1
  for (let k = 0; k < 32; k++) {
    table.push(p);
    p = multiplyModP(p, p);
  }
  return table;
})();

/** x^(n * 2^k) modulo the polynomial. */
function xPower(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multiplyModP(X2N[k & 31], p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/** The CRC-32 of A followed by B, from crc32(A), crc32(B) and B's length in bytes. */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multiplyModP(xPower(lengthB, 3), crcA) ^ crcB) >>> 0;
}
