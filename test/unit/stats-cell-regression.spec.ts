/**
 * Regressions when cells drift (issue 25 item 4): each run's beta-binomial posterior, the one-sided
 * posterior probability as the p-value, Holm over the family; pooled Fisher for results without cells.
 */
import assert from "node:assert/strict";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { detectCellRegressions } from "../../coordinator/stats/cell-regression.js";
import { detectRegression, holmAdjust } from "../../coordinator/stats/regression.js";

describe("stats: regressions over cells that drift between runs", function () {
  this.timeout(20_000);

  it("takes P(current >= baseline) from the two runs' posteriors as the p-value and adjusts it by Holm over the family", () => {
    const pairs = [
      { prior: { cells: [{ k: 10, n: 10 }] }, current: { cells: [{ k: 2, n: 10 }] } },
      { prior: { cells: [{ k: 10, n: 10 }] }, current: { cells: [{ k: 9, n: 10 }] } },
    ];
    const verdicts = detectCellRegressions(pairs);
    const p = pairs.map(({ prior, current }) => betaBinomialDifference(current.cells, prior.cells, { ci: 0.9 }).probability_a_greater);
    assert.deepEqual(verdicts.map((v) => v.p_value), p);
    assert.deepEqual(verdicts.map((v) => v.p_adjusted), holmAdjust(p));
    // The values docs/statistics.md quotes.
    assert.deepEqual(verdicts.map((v) => Number(v.p_value.toFixed(4))), [0.0035, 0.1939]);
    assert.deepEqual(verdicts.map((v) => v.regressed), [true, false]);
    assert.equal(verdicts[0].rule, "beta-binomial-posterior-drift");
    assert.equal(verdicts[0].interval_method, "beta-binomial-posterior-difference");
    assert.equal(verdicts[0].ci_level, 0.9);
  });

  it("does not flag a drop that three cells per run cannot tell from drift, where pooled Fisher does", () => {
    // 0.75 -> 0.62 pooled over 3 cells x 40 episodes, the cells disagreeing within each run.
    const prior = { cells: [{ k: 36, n: 40 }, { k: 24, n: 40 }, { k: 30, n: 40 }] };
    const current = { cells: [{ k: 20, n: 40 }, { k: 32, n: 40 }, { k: 22, n: 40 }] };
    const [verdict] = detectCellRegressions([{ prior, current }]);
    assert.equal(verdict.regressed, false, JSON.stringify(verdict));
    assert.equal(detectRegression({ k: 90, n: 120 }, { k: 74, n: 120 }).regressed, true);
  });

  it("falls back to the pooled Fisher rule for a result stored without per-cell counts", () => {
    const [verdict] = detectCellRegressions([{ prior: { cells: [], pooled: { k: 10, n: 10 } }, current: { cells: [{ k: 2, n: 10 }] } }]);
    assert.equal(verdict.rule, "fisher-exact-one-sided");
    assert.equal(verdict.p_value, detectRegression({ k: 10, n: 10 }, { k: 2, n: 10 }).p_value);
    assert.equal(verdict.regressed, true);
    assert.equal(verdict.adjustment, "holm");
  });

  it("rejects an alpha out of range", () => {
    assert.throws(() => detectCellRegressions([], { alpha: 0.6 }), /alpha must be in \(0, 0.5\); got 0.6/);
  });
});
