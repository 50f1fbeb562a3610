import assert from "node:assert/strict";
import { normalQuantile, wilsonInterval, wilsonSampleSize, zForConfidence } from "../../coordinator/stats/wilson.js";

describe("Wilson interval", () => {
  it("gives [0.596, 0.982] for 9 of 10", () => {
    const [low, high] = wilsonInterval(9, 10);
    assert.equal(low.toFixed(3), "0.596");
    assert.equal(high.toFixed(3), "0.982");
  });

  it("stays inside [0, 1] at the extremes", () => {
    const [low0, high0] = wilsonInterval(0, 20);
    assert.equal(low0, 0);
    assert.equal(high0.toFixed(4), "0.1611");
    const [low1, high1] = wilsonInterval(20, 20);
    assert.equal(low1.toFixed(4), "0.8389");
    assert.equal(high1, 1);
  });

  it("matches Newcombe (1998), Table I, method 3", () => {
    const table: Array<[number, number, string, string]> = [
      [81, 263, "0.2553", "0.3662"],
      [15, 148, "0.0624", "0.1605"],
      [0, 20, "0.0000", "0.1611"],
      [1, 29, "0.0061", "0.1718"],
    ];
    for (const [k, n, low, high] of table) {
      const [l, h] = wilsonInterval(k, n);
      assert.deepEqual([l.toFixed(4), h.toFixed(4)], [low, high], `${k}/${n}`);
    }
  });

  it("rejects counts that cannot be", () => {
    assert.throws(() => wilsonInterval(11, 10), /successes must be an integer in 0..10/);
    assert.throws(() => wilsonInterval(1.5, 10), /successes/);
  });
});

describe("normal quantiles", () => {
  it("reproduces the standard z values", () => {
    assert.equal(zForConfidence(0.95).toFixed(6), "1.959964");
    assert.equal(zForConfidence(0.99).toFixed(6), "2.575829");
    assert.equal(normalQuantile(0.9).toFixed(6), "1.281552");
    assert.equal(normalQuantile(0.001).toFixed(5), "-3.09023");
  });
});

describe("auto episode sizing", () => {
  it("needs 381 episodes for ci=0.95, moe=0.05 at p=0.5", () => {
    assert.equal(wilsonSampleSize(0.95, 0.05), 381);
  });

  it("returns the smallest n whose interval is narrow enough", () => {
    for (const [ci, moe] of [[0.95, 0.1], [0.9, 0.05], [0.99, 0.03]]) {
      const n = wilsonSampleSize(ci, moe);
      const width = (k: number) => { const [lo, hi] = wilsonInterval(Math.round(k / 2), k, ci); return (hi - lo) / 2; };
      assert.ok(width(n) <= moe + 1e-9, `n=${n} too small for ci=${ci} moe=${moe}`);
      // n - 1 at p = 0.5 exactly (even n only keeps k/n = 0.5): check the formula's half-width instead.
      const z = zForConfidence(ci);
      const half = (k: number) => (z / (1 + (z * z) / k)) * Math.sqrt(0.25 / k + (z * z) / (4 * k * k));
      assert.ok(half(n - 1) > moe, `n-1=${n - 1} would already do for ci=${ci} moe=${moe}`);
    }
  });
});
