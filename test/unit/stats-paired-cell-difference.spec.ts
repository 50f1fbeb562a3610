/**
 * The paired compare's model-level difference (issue 25 item 4): within-cell paired differences with a
 * cell-to-cell random effect. Checked against an independent computation (test/support/paired-cell-reference.ts),
 * and the values docs/statistics.md quotes are pinned.
 */
import assert from "node:assert/strict";
import { CALIBRATED_TAIL_SHARE, pairedCellDifference, type CellPairCounts } from "../../coordinator/stats/paired-cell-difference.js";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { pairedCellReference, type ReferencePair } from "../support/paired-cell-reference.js";

const cell = (both: number, onlyA: number, onlyB: number, neither: number): CellPairCounts => ({ n: both + onlyA + onlyB + neither, both, onlyA, onlyB });
function pairsOf(cells: CellPairCounts[]): ReferencePair[] {
  return cells.flatMap((c, g) => [
    ...Array.from({ length: c.both }, () => ({ cell: `c${g}`, a: true, b: true })),
    ...Array.from({ length: c.onlyA }, () => ({ cell: `c${g}`, a: true, b: false })),
    ...Array.from({ length: c.onlyB }, () => ({ cell: `c${g}`, a: false, b: true })),
    ...Array.from({ length: c.n - c.both - c.onlyA - c.onlyB }, () => ({ cell: `c${g}`, a: false, b: false })),
  ]);
}

// The rows of docs/statistics.md, "Paired compare: the difference within cells".
const PINNED: Array<{ cells: CellPairCounts[]; ci: [number, number]; pGreater: number; diff: number }> = [
  { cells: [cell(3, 3, 0, 0), cell(2, 1, 0, 0)], ci: [-0.0937, 0.9124], pGreater: 0.9640, diff: 0.4318 },
  { cells: [cell(30, 18, 5, 14), cell(28, 16, 6, 17), cell(25, 20, 8, 13)], ci: [-0.0801, 0.4302], pGreater: 0.9480, diff: 0.1750 },
  { cells: [cell(4, 5, 1, 2)], ci: [-0.3066, 0.8940], pGreater: 0.8797, diff: 0.3238 },
  { cells: [cell(10, 4, 4, 2), cell(5, 10, 1, 4), cell(7, 2, 6, 5), cell(9, 6, 2, 3)], ci: [-0.1847, 0.4097], pGreater: 0.8106, diff: 0.1125 },
];

describe("stats: paired compare's model-level difference within cells", function () {
  this.timeout(20_000);

  it("agrees with an independent grid computation of the same posterior to 0.003", () => {
    for (const { cells } of PINNED) {
      const got = pairedCellDifference(cells);
      const ref = pairedCellReference(pairsOf(cells), 1 - 0.05 * CALIBRATED_TAIL_SHARE);
      assert.ok(Math.abs(got.ci[0] - ref.ci[0]) < 0.003 && Math.abs(got.ci[1] - ref.ci[1]) < 0.003, `${JSON.stringify(got.ci)} vs ${JSON.stringify(ref.ci)}`);
      assert.ok(Math.abs(got.probability_a_greater - ref.probabilityAGreater) < 0.003);
      assert.ok(Math.abs(got.diff - ref.mean) < 0.003);
    }
  });

  it("gives the values the docs quote", () => {
    for (const { cells, ci, pGreater, diff } of PINNED) {
      const got = pairedCellDifference(cells);
      assert.deepEqual(got.ci.map((x) => Number(x.toFixed(4))), ci);
      assert.equal(Number(got.probability_a_greater.toFixed(4)), pGreater);
      assert.equal(Number(got.diff.toFixed(4)), diff);
      assert.equal(got.method, "paired-cell-random-effects-posterior");
    }
  });

  it("is wider on one cell than on three with the same pairs, and says nothing without pairs", () => {
    const three = pairedCellDifference([cell(10, 6, 2, 4), cell(10, 6, 2, 4), cell(10, 6, 2, 4)]);
    const one = pairedCellDifference([cell(30, 18, 6, 12)]);
    assert.ok(one.ci[1] - one.ci[0] > three.ci[1] - three.ci[0]);
    assert.deepEqual(pairedCellDifference([]).ci, [-1, 1]);
    assert.deepEqual(pairedCellDifference([{ n: 0, both: 0, onlyA: 0, onlyB: 0 }]).ci, [-1, 1]);
  });

  it("cancels a cell effect both policies share: narrower than the unpaired rule when cells differ a lot but agree on the difference", () => {
    // Cell 0 easy for both, cell 2 hard for both; A wins 8 more pairs than B on every cell.
    const cells = [cell(30, 10, 2, 8), cell(15, 10, 2, 23), cell(2, 10, 2, 36)];
    const paired = pairedCellDifference(cells);
    const unpaired = betaBinomialDifference(cells.map((c) => ({ k: c.both + c.onlyA, n: c.n })), cells.map((c) => ({ k: c.both + c.onlyB, n: c.n })));
    assert.ok(paired.ci[1] - paired.ci[0] < 0.8 * (unpaired.ci[1] - unpaired.ci[0]), `${JSON.stringify(paired.ci)} vs ${JSON.stringify(unpaired.ci)}`);
    assert.ok(paired.probability_a_greater > unpaired.probability_a_greater);
  });

  it("rejects counts that do not add up, naming the cell", () => {
    assert.throws(() => pairedCellDifference([{ n: 2, both: 1, onlyA: 1, onlyB: 1 }]), /cell 0: onlyA \+ onlyB \+ both must be at most n=2; got 3/);
    assert.throws(() => pairedCellDifference([{ n: 2.5, both: 0, onlyA: 0, onlyB: 0 }]), /cell 0: n must be a non-negative integer; got 2.5/);
  });
});
