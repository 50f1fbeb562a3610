import assert from "node:assert/strict";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import {
  createSequentialCompare,
  differenceConfidenceSequence,
  pairsForPower,
  sequentialCompareOperatingCharacteristics,
  type SequentialCompareOptions,
} from "../../coordinator/stats/sequential-compare.js";
import { confidenceSequence } from "../../coordinator/stats/sequential-threshold.js";
import { mulberry32, simulateCompare } from "../../coordinator/stats/simulation.js";

const fixed4 = (x: number) => x.toFixed(4);

describe("sequential comparison: exact operating characteristics", () => {
  it("equals the enumeration of every sequence of 9 pairs", () => {
    // Small boundaries (alpha 0.2, beta 0.3, delta 0.3) so that closing one side, deciding on the
    // other and reaching the cap all happen within 9 pairs.
    const options = { alpha: 0.2, beta: 0.3, delta: 0.3, maxPairs: 9 };
    const kinds = [{ a: true, b: true }, { a: true, b: false }, { a: false, b: true }];
    for (const [discordant, shareA] of [[0.6, 0.65], [0.3, 0.5], [1, 0.2]]) {
      const weights = [1 - discordant, discordant * shareA, discordant * (1 - shareA)];
      const enumerated = { a_better: 0, b_better: 0, no_difference: 0, expected_pairs: 0 };
      // Walk the tree of pair sequences depth-first, stopping each branch at its decision.
      const walk = (prefix: number[], probability: number) => {
        const compare = createSequentialCompare(options);
        let decision = "continue";
        for (const i of prefix) decision = compare.update(kinds[i]);
        if (decision !== "continue") {
          enumerated[decision as "a_better" | "b_better" | "no_difference"] += probability;
          enumerated.expected_pairs += probability * prefix.length;
          return;
        }
        for (let i = 0; i < 3; i++) if (weights[i] > 0) walk([...prefix, i], probability * weights[i]);
      };
      walk([], 1);
      const exact = sequentialCompareOperatingCharacteristics(options, discordant, shareA);
      for (const key of ["a_better", "b_better", "no_difference", "expected_pairs"] as const) {
        assert.ok(Math.abs(exact[key] - enumerated[key]) < 1e-12, `${discordant}/${shareA} ${key}: ${exact[key]} vs ${enumerated[key]}`);
      }
    }
  });

  it("agrees with simulateCompare", () => {
    const options: SequentialCompareOptions = { alpha: 0.05, beta: 0.2, delta: 0.2, maxPairs: 172 };
    const runs = 2000;
    for (const [shareA, seed] of [[0.7, 31], [0.5, 32]]) {
      const simulated = simulateCompare(() => createSequentialCompare(options), 0.3, shareA, runs, seed);
      const exact = sequentialCompareOperatingCharacteristics(options, 0.3, shareA);
      for (const key of ["a_better", "b_better"] as const) {
        const se = Math.sqrt((exact[key] * (1 - exact[key])) / runs);
        assert.ok(Math.abs(simulated.rates[key] - exact[key]) <= 4 * se + 1e-9, `${shareA} ${key}: ${simulated.rates[key]} vs ${exact[key]}`);
      }
      // Pairs per run are at most 172; their standard deviation is well under 60.
      assert.ok(Math.abs(simulated.meanPairs - exact.expected_pairs) <= (4 * 60) / Math.sqrt(runs), `${shareA} pairs ${simulated.meanPairs} vs ${exact.expected_pairs}`);
    }
  });

  it("reproduces the power-at-the-cap table of docs/statistics.md", () => {
    // alpha 0.05, beta 0.2, 30% discordant. [delta, fixed-n McNemar pairs, power and mean pairs at
    // caps 1x, 2x, 4x the fixed n, pairsForPower, power and mean pairs there, type I at 1x]
    const table: Array<[number, number, string[], number, string, string, string]> = [
      [0.1, 681, ["0.6421", "418.8", "0.8054", "468.6", "0.8218", "473.6"], 1282, "0.8000", "467.0", "0.0296"],
      [0.15, 306, ["0.6490", "189.1", "0.8133", "211.5", "0.8294", "213.6"], 537, "0.8002", "209.7", "0.0288"],
      [0.2, 172, ["0.6552", "108.7", "0.8279", "121.6", "0.8446", "122.8"], 273, "0.8003", "119.5", "0.0276"],
      [0.3, 77, ["0.6873", "47.4", "0.8421", "52.5", "0.8563", "52.9"], 111, "0.8003", "51.1", "0.0307"],
    ];
    for (const [delta, fixedN, atCaps, needed, powerNeeded, pairsNeeded, typeOne] of table) {
      const base = { alpha: 0.05, beta: 0.2, delta };
      const figures = [1, 2, 4].flatMap((multiple) => {
        const h1 = sequentialCompareOperatingCharacteristics({ ...base, maxPairs: multiple * fixedN }, 0.3, 0.5 + delta);
        return [fixed4(h1.a_better), h1.expected_pairs.toFixed(1)];
      });
      assert.deepEqual(figures, atCaps, `delta ${delta}`);
      assert.equal(pairsForPower(base, 0.3), needed, `delta ${delta}`);
      const atNeeded = sequentialCompareOperatingCharacteristics({ ...base, maxPairs: needed }, 0.3, 0.5 + delta);
      assert.deepEqual([fixed4(atNeeded.a_better), atNeeded.expected_pairs.toFixed(1)], [powerNeeded, pairsNeeded]);
      const below = sequentialCompareOperatingCharacteristics({ ...base, maxPairs: needed - 1 }, 0.3, 0.5 + delta);
      assert.ok(below.a_better < 0.8, `delta ${delta}: ${below.a_better} at ${needed - 1}`);
      const h0 = sequentialCompareOperatingCharacteristics({ ...base, maxPairs: fixedN }, 0.3, 0.5);
      assert.equal(fixed4(h0.a_better + h0.b_better), typeOne);
      assert.equal(h0.a_better, h0.b_better);
    }
  });

  it("handles pairs that are never or always discordant, and rejects what it cannot reach", () => {
    const options = { alpha: 0.05, beta: 0.2, delta: 0.25, maxPairs: 50 };
    assert.deepEqual(sequentialCompareOperatingCharacteristics(options, 0, 0.9), { a_better: 0, b_better: 0, no_difference: 1, expected_pairs: 50 });
    // Always discordant and A always wins: a_better at the 10th pair (see stats-sequential.spec.ts).
    const certain = sequentialCompareOperatingCharacteristics(options, 1, 1);
    assert.equal(certain.a_better, 1);
    assert.equal(certain.expected_pairs, 10);
    assert.throws(() => pairsForPower({ alpha: 0.05, beta: 0.2, delta: 0.2 }, 0.3, 0.99), /power 0.99 is out of reach: with no cap at all the comparison declares a_better with probability 0\.\d{4}/);
    assert.throws(() => pairsForPower({ alpha: 0.05, beta: 0.2, delta: 0.2 }, 0), /discordant must be in \(0, 1\]; got 0/);
    assert.throws(() => sequentialCompareOperatingCharacteristics(options, 1.2, 0.5), /discordant must be in \[0, 1\]; got 1.2/);
  });
});

describe("confidence sequence of the paired difference", () => {
  it("is the product of the discordant-share and discordant-winner sequences", () => {
    const counts = { both: 50, onlyA: 20, onlyB: 10, neither: 20 };
    const result = differenceConfidenceSequence(counts, 0.05);
    const [sLow, sHigh] = confidenceSequence(30, 100, 0.025);
    const [tLow, tHigh] = confidenceSequence(20, 30, 0.025);
    assert.equal(result.diff, 0.1);
    assert.equal(result.interval_method, "discordant-product-cs");
    assert.equal(result.ci_level, 0.95);
    assert.deepEqual(result.ci, [sHigh * (2 * tLow - 1), sHigh * (2 * tHigh - 1)]);
    assert.deepEqual(result.ci.map(fixed4), ["-0.1231", "0.3709"]);
    // Wider than the fixed-n Newcombe interval at the same counts, which is not valid after peeking.
    const fixed = pairedDifferenceInterval(counts).ci;
    assert.ok(result.ci[0] < fixed[0] && result.ci[1] > fixed[1]);
    assert.deepEqual(differenceConfidenceSequence({ both: 0, onlyA: 0, onlyB: 0, neither: 0 }, 0.05).ci, [-1, 1]);
    const oneSided = differenceConfidenceSequence({ both: 45, onlyA: 10, onlyB: 0, neither: 45 }, 0.05);
    assert.deepEqual(oneSided.ci.map(fixed4), ["0.0024", "0.2269"]);
    assert.throws(() => differenceConfidenceSequence({ ...counts, onlyA: -1 }, 0.05), /onlyA must be a non-negative integer; got -1/);
  });

  it("covers the true difference when the sequential comparison stops early (small simulation)", () => {
    // 300 runs per truth; the decision is made on the data, so the stop is optional stopping.
    const runs = 300;
    const random = mulberry32(77);
    for (const [discordant, shareA] of [[0.3, 0.5], [0.3, 0.7], [0.5, 0.8]]) {
      const truth = discordant * (2 * shareA - 1);
      let covered = 0;
      for (let r = 0; r < runs; r++) {
        const compare = createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.2, maxPairs: 172 });
        let decision = "continue";
        while (decision === "continue") {
          if (random() < discordant) {
            const a = random() < shareA;
            decision = compare.update({ a, b: !a });
          } else {
            const both = random() < 0.5;
            decision = compare.update({ a: both, b: both });
          }
        }
        const { both, onlyA, onlyB, neither } = compare.state();
        const [low, high] = differenceConfidenceSequence({ both, onlyA, onlyB, neither }, 0.05).ci;
        if (low <= truth && truth <= high) covered++;
      }
      // Sampling slack: 0.95 - 2.33 standard errors of a 300-run proportion.
      assert.ok(covered / runs >= 0.95 - 2.33 * Math.sqrt((0.95 * 0.05) / runs), `${discordant}/${shareA}: ${covered / runs}`);
    }
  });
});
