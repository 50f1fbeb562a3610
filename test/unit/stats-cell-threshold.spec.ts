/**
 * The threshold test over cells (issue 25 item 4): its posterior probability against an independent
 * computation, the values docs/statistics.md quotes, and its decisions.
 */
import assert from "node:assert/strict";
import { CELL_THRESHOLD_GAMMA_SHARE, createCellThresholdTest } from "../../coordinator/stats/cell-threshold.js";
import { referenceProbabilityBelow } from "../support/beta-binomial-reference.js";

type Episode = [boolean, string];
const cellOf = (cell: string, n: number, failures: number): Episode[] => Array.from({ length: n }, (_, i) => [i >= failures, cell]);
// Interleaved over cells the way a fleet runs them; the posterior does not depend on the order.
const interleave = (...cells: Episode[][]): Episode[] => {
  const out: Episode[] = [];
  for (let i = 0; i < Math.max(...cells.map((c) => c.length)); i++) for (const c of cells) if (i < c.length) out.push(c[i]);
  return out;
};

// The rows of docs/statistics.md, "Threshold over cells" (target 0.8).
const PINNED: Array<{ name: string; episodes: Episode[]; cells: Array<{ k: number; n: number }>; below: number }> = [
  { name: "4 cells, 10/10 each", episodes: interleave(cellOf("a", 10, 0), cellOf("b", 10, 0), cellOf("c", 10, 0), cellOf("d", 10, 0)), cells: [10, 10, 10, 10].map((n) => ({ k: n, n })), below: 0.0014 },
  { name: "3 cells, 20/20, 18/20, 19/20", episodes: interleave(cellOf("a", 20, 0), cellOf("b", 20, 2), cellOf("c", 20, 1)), cells: [{ k: 20, n: 20 }, { k: 18, n: 20 }, { k: 19, n: 20 }], below: 0.0347 },
  { name: "1 cell, 100/100", episodes: cellOf("a", 100, 0), cells: [{ k: 100, n: 100 }], below: 0.0127 },
];

function probabilityBelow(episodes: Episode[]): number {
  const test = createCellThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 1000, gamma: 1e-12 });
  for (const [ok, cell] of episodes) test.update(ok, cell);
  return test.state().probability_below;
}

describe("stats: the threshold test over cells", function () {
  this.timeout(20_000);

  it("computes P(μ ≤ target) as an independent grid computation of the beta-binomial posterior does, to 0.003", () => {
    for (const { name, episodes, cells } of PINNED) {
      const got = probabilityBelow(episodes);
      const ref = referenceProbabilityBelow(cells, 0.8);
      assert.ok(Math.abs(got - ref) < 0.003, `${name}: ${got} vs ${ref}`);
    }
  });

  it("gives the values the docs quote", () => {
    for (const { episodes, below } of PINNED) assert.equal(Number(probabilityBelow(episodes).toFixed(4)), below);
  });

  it("passes 40/40 on four cells at target 0.8, not 100/100 on one cell: one cell cannot show a model-level rate", () => {
    const four = createCellThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 100 });
    let decision = "continue";
    for (const [ok, cell] of PINNED[0].episodes) decision = four.update(ok, cell);
    assert.equal(decision, "pass");
    assert.equal(four.state().reason, "pass_boundary");
    assert.equal(four.state().gamma, 0.05 * CELL_THRESHOLD_GAMMA_SHARE);
    const one = createCellThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 100 });
    for (const [ok, cell] of PINNED[2].episodes) decision = one.update(ok, cell);
    assert.equal(decision, "inconclusive");
    assert.equal(one.state().reason, "max_episodes");
  });

  it("fails a policy that is clearly below the target, and its decision is sticky", () => {
    const test = createCellThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 100 });
    let decision = "continue";
    for (const [ok, cell] of interleave(cellOf("a", 20, 12), cellOf("b", 20, 11), cellOf("c", 20, 13))) decision = test.update(ok, cell);
    assert.equal(decision, "fail");
    assert.equal(test.update(true, "a"), "fail");
    assert.equal(test.state().reason, "fail_boundary");
  });

  it("rejects settings out of range with the value", () => {
    assert.throws(() => createCellThresholdTest({ target: 1, alpha: 0.05, maxEpisodes: 10 }), /target must be in \(0, 1\); got 1/);
    assert.throws(() => createCellThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 0 }), /maxEpisodes must be a positive integer; got 0/);
  });
});
