/**
 * crc32Combine joins two ranges' CRC-32s into the CRC of the ranges back to back, as if computed
 * over the joined bytes (which is how the recording's data-section CRC is checked by every reader).
 */
import { strict as assert } from "node:assert";
import { crc32 } from "node:zlib";
import { crc32Combine } from "../../cell-agent/recording/crc32-combine.js";

describe("crc32Combine", () => {
  it("equals the CRC of the joined bytes for empty, short, odd and chunk-sized ranges", () => {
    let seed = 99;
    const bytes = new Uint8Array(1_100_000).map(() => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);
    const cases: Array<[number, number]> = [[0, 0], [0, 7], [5, 0], [1, 1], [3, 1000], [1000, 3], [12345, 1_048_576], [1_048_576, 51_424]];
    for (const [a, b] of cases) {
      const first = bytes.subarray(0, a);
      const second = bytes.subarray(a, a + b);
      assert.equal(crc32Combine(crc32(first), crc32(second), b), crc32(bytes.subarray(0, a + b)), `lengths ${a} + ${b}`);
    }
  });
});
