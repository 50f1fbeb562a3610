import assert from "node:assert/strict";
import { mcnemarExact } from "../../coordinator/stats/mcnemar.js";
import { pairedDifferenceInterval, tallyPairs } from "../../coordinator/stats/paired-difference.js";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";

const fixed4 = ([low, high]: [number, number]) => [low.toFixed(4), high.toFixed(4)];

describe("exact McNemar test", () => {
  it("matches known p-values", () => {
    assert.ok(Math.abs(mcnemarExact(1, 9).p_value - 0.021484375) < 1e-12);
    assert.equal(mcnemarExact(0, 0).p_value, 1);
    assert.equal(mcnemarExact(5, 5).p_value, 1);
    // Fagerland, Lydersen & Laake (2017), ch. 8, Cavo et al. table (b = 6, c = 16): P = 0.052479.
    assert.equal(mcnemarExact(6, 16).p_value.toFixed(6), "0.052479");
    assert.deepEqual({ ...mcnemarExact(6, 16), p_value: 0 }, { b: 6, c: 16, n_discordant: 22, p_value: 0, method: "mcnemar-exact" });
  });

  it("is symmetric and rejects bad counts", () => {
    assert.equal(mcnemarExact(9, 1).p_value, mcnemarExact(1, 9).p_value);
    assert.throws(() => mcnemarExact(-1, 3), /b must be a non-negative integer/);
  });
});

describe("Newcombe hybrid score interval (independent samples)", () => {
  it("matches Newcombe (1998a), Table II, method 10", () => {
    const table: Array<[number, number, number, number, string, string]> = [
      [56, 70, 48, 80, "0.0524", "0.3339"],
      [9, 10, 3, 10, "0.1705", "0.8090"],
      [6, 7, 2, 7, "0.0582", "0.8062"],
      [5, 56, 0, 29, "-0.0381", "0.1926"],
      [0, 10, 0, 20, "-0.1611", "0.2775"],
      [0, 10, 0, 10, "-0.2775", "0.2775"],
      [10, 10, 0, 20, "0.6791", "1.0000"],
      [10, 10, 0, 10, "0.6075", "1.0000"],
    ];
    for (const [k1, n1, k2, n2, low, high] of table) {
      const result = newcombeDifference(k1, n1, k2, n2, 0.95);
      assert.deepEqual(fixed4(result.ci), [low, high], `${k1}/${n1} - ${k2}/${n2}`);
      assert.equal(result.method, "newcombe-hybrid-score");
    }
  });
});

describe("Newcombe paired interval (method 10)", () => {
  it("matches the published Cavo et al. example", () => {
    // Fagerland, Lydersen & Laake (2017), ch. 8: 59, 6, 16, 80 -> -0.0621 (-0.1186 to -0.0046).
    const result = pairedDifferenceInterval({ both: 59, onlyA: 6, onlyB: 16, neither: 80 });
    assert.equal(result.diff.toFixed(4), "-0.0621");
    assert.deepEqual(fixed4(result.ci), ["-0.1186", "-0.0046"]);
    assert.equal(result.method, "newcombe-paired");
  });

  it("agrees with a from-the-formula derivation on the Bentur et al. table", () => {
    // 1, 1, 7, 12 (n = 21): A = 1*12 - 1*7 = 5 <= n/2, so Newcombe's corrected phi is 0 and the
    // interval is the plain square-and-add of the Wilson intervals of 2/21 and 8/21.
    const [lA, uA] = wilsonInterval(2, 21);
    const [lB, uB] = wilsonInterval(8, 21);
    const pA = 2 / 21;
    const pB = 8 / 21;
    const expected: [number, number] = [pA - pB - Math.hypot(pA - lA, uB - pB), pA - pB + Math.hypot(uA - pA, pB - lB)];
    const result = pairedDifferenceInterval({ both: 1, onlyA: 1, onlyB: 7, neither: 12 });
    assert.ok(Math.abs(result.ci[0] - expected[0]) < 1e-12 && Math.abs(result.ci[1] - expected[1]) < 1e-12);
    assert.deepEqual(fixed4(result.ci), ["-0.5069", "-0.0256"]);
  });

  it("is narrower than the unpaired interval when the arms succeed and fail together", () => {
    const paired = pairedDifferenceInterval({ both: 40, onlyA: 8, onlyB: 2, neither: 50 });
    const unpaired = newcombeDifference(48, 100, 42, 100);
    assert.ok(paired.ci[1] - paired.ci[0] < unpaired.ci[1] - unpaired.ci[0] - 0.02);
    assert.equal(paired.diff, unpaired.diff);
  });

  it("is antisymmetric in the arms, never zero-width, and uninformative with no pairs", () => {
    const ab = pairedDifferenceInterval({ both: 2, onlyA: 3, onlyB: 1, neither: 4 });
    const ba = pairedDifferenceInterval({ both: 2, onlyA: 1, onlyB: 3, neither: 4 });
    assert.ok(Math.abs(ab.ci[0] + ba.ci[1]) < 1e-12 && Math.abs(ab.ci[1] + ba.ci[0]) < 1e-12);
    const allAgree = pairedDifferenceInterval({ both: 5, onlyA: 0, onlyB: 0, neither: 5 });
    assert.ok(allAgree.ci[1] - allAgree.ci[0] > 0.1);
    assert.deepEqual(pairedDifferenceInterval({ both: 0, onlyA: 0, onlyB: 0, neither: 0 }).ci, [-1, 1]);
    assert.throws(() => pairedDifferenceInterval({ both: 1, onlyA: -1, onlyB: 0, neither: 0 }), /onlyA must be a non-negative integer/);
  });

  it("tallies boolean pairs into the table", () => {
    const pairs = [{ a: true, b: true }, { a: true, b: false }, { a: false, b: true }, { a: false, b: false }, { a: true, b: false }];
    assert.deepEqual(tallyPairs(pairs), { both: 1, onlyA: 2, onlyB: 1, neither: 1 });
  });
});

describe("differences as people read them", () => {
  it("carry no float noise: 10/10 − 7/10 is 0.3, paired and unpaired (issue 28 showed 0.30000000000000004)", () => {
    assert.equal(pairedDifferenceInterval({ both: 7, onlyA: 3, onlyB: 0, neither: 0 }).diff, 0.3);
    assert.equal(newcombeDifference(10, 10, 7, 10).diff, 0.3);
    assert.equal(newcombeDifference(7, 10, 4, 10).diff, 0.3);
    assert.equal(newcombeDifference(3, 5, 1, 3).diff, 4 / 15);
  });
});
