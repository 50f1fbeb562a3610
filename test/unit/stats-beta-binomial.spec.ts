import assert from "node:assert/strict";
import { betaBinomialRate, DEFAULT_HEADLINE_PRIOR, type HeadlinePrior } from "../../coordinator/stats/beta-binomial-rate.js";
import { theseCellsRate } from "../../coordinator/stats/these-cells-rate.js";
import { betaQuantile } from "../../coordinator/stats/special-functions.js";
import { wilsonInterval, zForConfidence } from "../../coordinator/stats/wilson.js";
import { headlineStatement } from "../../coordinator/runs/headline-statement.js";
import { referenceOf } from "../support/beta-binomial-reference.js";

type Cells = Array<{ k: number; n: number }>;

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

const README: Cells = [{ k: 7, n: 7 }, { k: 6, n: 6 }, { k: 7, n: 7 }];
const UNEQUAL: Cells = [{ k: 9, n: 10 }, { k: 30, n: 40 }, { k: 3, n: 5 }];

describe("beta-binomial model-level rate", () => {
  it("gives the README run (20/20 on three cells, 7/6/7) about [0.84, 1], resting on the prior", () => {
    const r = betaBinomialRate(README);
    assert.equal(r.interval_method, "beta-binomial-posterior");
    assert.equal(r.clusters, 3);
    close(r.ci[0], 0.8427, 5e-5, "lower");
    assert.equal(r.ci[1], 1, "no failures: the upper bound is 1");
    close(r.mean, 0.9686, 5e-5, "posterior mean");
    close(r.effective_n, 15.47, 0.005, "effective n");
    close(r.icc.median, 0.0824, 0.0005, "ICC median");
    close(r.icc.upper95, 0.3036, 0.0005, "ICC 95% upper bound");
    assert.equal(r.rests_on_prior, true);
    assert.deepEqual(r.prior, DEFAULT_HEADLINE_PRIOR);
  });

  it("rests one cell on the prior, and is much wider than that cell's Wilson interval", () => {
    const r = betaBinomialRate([{ k: 15, n: 20 }]);
    close(r.ci[0], 0.3461, 5e-5, "lower");
    close(r.ci[1], 0.9422, 5e-5, "upper");
    close(r.effective_n, 9.03, 0.005, "effective n");
    assert.equal(r.rests_on_prior, true);
    const wilson = wilsonInterval(15, 20);
    assert.ok(r.ci[0] < wilson[0] && r.ci[1] > wilson[1]);
  });

  it("takes unequal cells as they are", () => {
    const r = betaBinomialRate(UNEQUAL);
    close(r.ci[0], 0.5337, 5e-5, "lower");
    close(r.ci[1], 0.8940, 5e-5, "upper");
    // Cells in any order, and empty cells, change nothing.
    const shuffled = betaBinomialRate([UNEQUAL[2], { k: 0, n: 0 }, UNEQUAL[0], UNEQUAL[1]]).ci;
    close(shuffled[0], r.ci[0], 1e-12, "lower, cells shuffled");
    close(shuffled[1], r.ci[1], 1e-12, "upper, cells shuffled");
  });

  it("says the cells have spoken once they leave less than half the ICC's prior variance", () => {
    const r = betaBinomialRate([40, 45, 30, 48, 41, 44, 39, 47].map((k) => ({ k, n: 50 })));
    close(r.ci[0], 0.7261, 5e-5, "lower");
    close(r.ci[1], 0.8955, 5e-5, "upper");
    assert.ok(r.icc_variance_ratio < 0.5, `variance ratio ${r.icc_variance_ratio}`);
    assert.equal(r.rests_on_prior, false);
  });

  it("agrees with an independent computation of the posterior to 0.001", function () {
    this.timeout(20_000);
    for (const cells of [README, UNEQUAL, [{ k: 15, n: 20 }], [{ k: 0, n: 10 }, { k: 1, n: 10 }]]) {
      const posterior = betaBinomialRate(cells);
      const mine = posterior.ci;
      const { ci: reference, icc } = referenceOf(cells);
      close(posterior.icc.median, icc[0], 0.002, `ICC median of ${JSON.stringify(cells)}`);
      close(posterior.icc.upper95, icc[1], 0.002, `ICC 95th percentile of ${JSON.stringify(cells)}`);
      // The boundary rule sets a bound to exactly 0 or 1 where the reference gives its quantile.
      const k = cells.reduce((sum, c) => sum + c.k, 0);
      const n = cells.reduce((sum, c) => sum + c.n, 0);
      if (k > 0) close(mine[0], reference[0], 0.001, `lower of ${JSON.stringify(cells)}`);
      if (k < n) close(mine[1], reference[1], 0.001, `upper of ${JSON.stringify(cells)}`);
      if (k === n) assert.ok(reference[1] > 0.999);
    }
  });

  it("is Jeffreys' interval of the pooled count when the prior says cells do not differ (the binomial limit)", () => {
    const identical: HeadlinePrior = { ...DEFAULT_HEADLINE_PRIOR, icc: { family: "beta", parameters: { a: 1, b: 1e6 } }, source: "test" };
    const r = betaBinomialRate([{ k: 30, n: 50 }, { k: 30, n: 50 }], { prior: identical });
    close(r.ci[0], betaQuantile(0.025, 60.5, 40.5), 0.001, "lower");
    close(r.ci[1], betaQuantile(0.975, 60.5, 40.5), 0.001, "upper");
    close(r.effective_n, 102, 0.5, "effective n: a Beta(a, b) posterior is worth a + b + 1 episodes");
    // Large counts stay finite and sensible (log-gamma path, rising-factorial path).
    const big = betaBinomialRate([{ k: 8000, n: 10000 }, { k: 8100, n: 10000 }], { prior: identical });
    assert.ok(big.ci[0] > 0.79 && big.ci[1] < 0.815, JSON.stringify(big.ci));
  });

  it("bounds are exactly 0 with no successes and 1 with no failures; no episodes gives [0, 1]", () => {
    const none = betaBinomialRate([{ k: 0, n: 10 }, { k: 0, n: 10 }]);
    assert.equal(none.ci[0], 0);
    close(none.ci[1], 0.1815, 5e-5, "upper");
    const empty = betaBinomialRate([]);
    assert.deepEqual(empty.ci, [0, 1]);
    assert.equal(empty.effective_n, 0);
    assert.equal(empty.rests_on_prior, true);
    // With no data the ICC posterior is the prior: Beta(1, 9) has median 1 − 2^(−1/9) and 95th percentile 1 − 0.05^(1/9).
    close(empty.icc.median, 1 - 2 ** (-1 / 9), 0.001, "prior median");
    close(empty.icc.upper95, 1 - 0.05 ** (1 / 9), 0.001, "prior 95th percentile");
  });

  it("narrows as cells are added, towards Wilson when the cells agree", () => {
    const widths = [1, 2, 4, 8, 16].map((g) => {
      const [lo, hi] = betaBinomialRate(Array.from({ length: g }, () => ({ k: 16, n: 20 }))).ci;
      return hi - lo;
    });
    for (let i = 1; i < widths.length; i++) assert.ok(widths[i] < widths[i - 1], JSON.stringify(widths));
    const wilson = wilsonInterval(256, 320);
    assert.ok(widths[4] < 1.6 * (wilson[1] - wilson[0]), `16 cells: ${widths[4]} vs Wilson ${wilson[1] - wilson[0]}`);
  });

  it("computes at another confidence, and rejects impossible input with what to fix", () => {
    const at80 = betaBinomialRate(UNEQUAL, { ci: 0.8 }).ci;
    const at95 = betaBinomialRate(UNEQUAL).ci;
    assert.ok(at80[0] > at95[0] && at80[1] < at95[1]);
    assert.throws(() => betaBinomialRate([{ k: 3, n: 2 }]), /cluster 0: k must be an integer in 0..2; got 3/);
    assert.throws(() => betaBinomialRate([{ k: 0, n: -1 }]), /cluster 0: n must be a non-negative integer; got -1/);
    assert.throws(() => betaBinomialRate(README, { ci: 1 }), /confidence must be in \(0, 1\); got 1/);
    const bad: HeadlinePrior = { ...DEFAULT_HEADLINE_PRIOR, icc: { family: "beta", parameters: { a: 0, b: 9 } } };
    assert.throws(() => betaBinomialRate(README, { prior: bad }), /icc prior needs Beta parameters a, b > 0; got a=0, b=9/);
  });
});

describe("rate on these very cells", () => {
  it("is the Wilson interval of the totals when every cell ran as many episodes", () => {
    const cells = [{ k: 18, n: 20 }, { k: 12, n: 20 }];
    assert.deepEqual(theseCellsRate(cells), { success_rate: 0.75, ci95: wilsonInterval(30, 40), interval_method: "wilson" });
    assert.deepEqual(theseCellsRate([{ k: 3, n: 7 }]), { success_rate: 3 / 7, ci95: wilsonInterval(3, 7), interval_method: "wilson" });
  });

  it("is the equal-weight stratified Wilson interval when they did not", () => {
    const r = theseCellsRate(UNEQUAL);
    assert.equal(r.interval_method, "stratified-wilson");
    close(r.success_rate, (0.9 + 0.75 + 0.6) / 3, 1e-12, "mean of the cells' rates");
    // Wilson's score interval at p = 0.75 with n* = 9 / (1/10 + 1/40 + 1/5) = 27.69, solved here as the quadratic
    // (p̂ − p)² = z² p (1 − p) / n*.
    const z = zForConfidence(0.95);
    const nStar = 9 / (1 / 10 + 1 / 40 + 1 / 5);
    const a = 1 + (z * z) / nStar;
    const b = -(2 * 0.75 + (z * z) / nStar);
    const c = 0.75 * 0.75;
    const root = Math.sqrt(b * b - 4 * a * c);
    close(r.ci95[0], (-b - root) / (2 * a), 1e-12, "lower");
    close(r.ci95[1], (-b + root) / (2 * a), 1e-12, "upper");
    close(r.ci95[0], 0.5654, 5e-5, "lower, as the docs quote it");
    close(r.ci95[1], 0.8737, 5e-5, "upper, as the docs quote it");
    assert.deepEqual(theseCellsRate(README).ci95[1], 1, "no failures: the upper bound is 1");
  });
});

describe("headline statement", () => {
  it("says both claims, labelled, in the words the docs quote", () => {
    const model = betaBinomialRate(README);
    const cells = { clusters: 3, effective_n: model.effective_n, these_cells: theseCellsRate(README), icc: model.icc, prior: model.prior, rests_on_prior: model.rests_on_prior };
    assert.deepEqual(headlineStatement({ n: 20, success_rate: 1, ci95: model.ci }, cells), [
      "Model-level success rate (a new cell of this robot model): 1.00 [0.84, 1.00], 95% beta-binomial posterior over 3 cells.",
      "On these 3 cells: 1.00 [0.84, 1.00] (stratified Wilson, 95%).",
      "Between-cell correlation (ICC): median 0.08, 95% upper bound 0.30; the model-level interval is worth 15.5 independent episodes.",
      "With 3 cells the model-level interval rests mostly on the prior for how much cells differ (ICC ~ Beta(1, 9), default): run on more cells to narrow it.",
    ]);
    const one = [{ k: 15, n: 20 }];
    const m1 = betaBinomialRate(one);
    const lines = headlineStatement({ n: 20, success_rate: 0.75, ci95: m1.ci },
      { clusters: 1, effective_n: m1.effective_n, these_cells: theseCellsRate(one), icc: m1.icc, prior: m1.prior, rests_on_prior: m1.rests_on_prior });
    assert.equal(lines[1], "On this cell: 0.75 [0.53, 0.89] (Wilson, 95%).");
    assert.equal(lines[3], "One cell ran these episodes, so the model-level interval rests on the prior for how much cells differ (ICC ~ Beta(1, 9), default): run on more cells to narrow it.");
    assert.deepEqual(headlineStatement({ n: 0, success_rate: 0, ci95: [0, 1] }, cells), []);
  });
});

describe("the values docs/statistics.md quotes", () => {
  // Each row of the table in "The headline": cells, ci95, these cells, effective_n, ICC median and 95% upper, rests on prior.
  const rows: Array<[Cells, [number, number], [number, number], string, string, [number, number], boolean]> = [
    [README, [0.8427, 1], [0.8382, 1], "stratified-wilson", "15.47", [0.082, 0.304], true],
    [[{ k: 15, n: 20 }], [0.3461, 0.9422], [0.5313, 0.8881], "wilson", "9.03", [0.067, 0.258], true],
    [UNEQUAL, [0.5337, 0.8940], [0.5654, 0.8737], "stratified-wilson", "23.0", [0.051, 0.208], true],
    [[40, 45, 30, 48, 41, 44, 39, 47].map((k) => ({ k, n: 50 })), [0.7261, 0.8955], [0.7955, 0.8682], "wilson", "78.3", [0.073, 0.174], false],
    [[{ k: 0, n: 10 }, { k: 0, n: 10 }], [0, 0.1815], [0, 0.1611], "wilson", "12.9", [0.085, 0.309], true],
  ];
  for (const [cells, ci, these, method, effectiveN, icc, restsOnPrior] of rows) {
    it(`${cells.map((c) => `${c.k}/${c.n}`).join(", ")}`, () => {
      const model = betaBinomialRate(cells);
      const local = theseCellsRate(cells);
      const digits = (x: number, places: number) => Number(x.toFixed(places));
      assert.deepEqual(model.ci.map((x) => digits(x, 4)), ci);
      assert.deepEqual(local.ci95.map((x) => digits(x, 4)), these);
      assert.equal(local.interval_method, method);
      assert.equal(model.effective_n.toFixed(effectiveN.split(".")[1].length), effectiveN);
      assert.deepEqual([digits(model.icc.median, 3), digits(model.icc.upper95, 3)], icc);
      assert.equal(model.rests_on_prior, restsOnPrior);
    });
  }
});
