import assert from "node:assert/strict";
import { binomialPmf } from "../../coordinator/stats/binomial.js";
import { benjaminiHochbergAdjust, detectRegression, detectRegressions, holmAdjust } from "../../coordinator/stats/regression.js";

/** The 15 p-values of Benjamini & Hochberg's (1995) worked example (from Neuhaus et al. 1992). */
const BH_EXAMPLE = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.324, 0.4262, 0.5719, 0.6528, 0.759, 1];

describe("multiplicity adjustments", () => {
  it("Benjamini-Hochberg flags the four discoveries of the 1995 paper's example; Holm three", () => {
    const adjusted = benjaminiHochbergAdjust(BH_EXAMPLE);
    const expected = [0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.063857, 0.063857, 0.0645, 0.0765, 0.486, 0.581182, 0.714875, 0.753231, 0.813214, 1];
    adjusted.forEach((p, i) => assert.ok(Math.abs(p - expected[i]) < 5e-7, `rank ${i + 1}: ${p} vs ${expected[i]}`));
    assert.equal(adjusted.filter((p) => p <= 0.05).length, 4);
    assert.equal(holmAdjust(BH_EXAMPLE).filter((p) => p <= 0.05).length, 3);
  });

  it("gives monotone adjusted p-values whatever the input order", () => {
    const shuffled = [0.04, 0.01, 0.03, 0.5, 0.02];
    const adjusted = benjaminiHochbergAdjust(shuffled);
    // Sorted 0.01, 0.02, 0.03, 0.04, 0.5 -> 5p/i = 0.05, 0.05, 0.05, 0.05, 0.5.
    assert.deepEqual(adjusted.map((p) => Number(p.toFixed(10))), [0.05, 0.05, 0.05, 0.5, 0.05]);
    const order = shuffled.map((p, i) => [p, adjusted[i]]).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < order.length; i++) assert.ok(order[i][1] >= order[i - 1][1]);
    assert.deepEqual(benjaminiHochbergAdjust([]), []);
  });
});

describe("regressions over a family of units", () => {
  const units = [
    { prior: { k: 90, n: 100 }, current: { k: 75, n: 100 } }, // clear drop
    { prior: { k: 90, n: 100 }, current: { k: 86, n: 100 } }, // noise
    { prior: { k: 80, n: 100 }, current: { k: 70, n: 100 } }, // borderline
  ];

  it("keeps each unit's p-value and flags on the Holm-adjusted one by default", () => {
    const results = detectRegressions(units);
    const raw = units.map(({ prior, current }) => detectRegression(prior, current).p_value);
    const holm = holmAdjust(raw);
    results.forEach((result, i) => {
      assert.equal(result.p_value, raw[i]);
      assert.equal(result.p_adjusted, holm[i]);
      assert.equal(result.adjustment, "holm");
      assert.equal(result.regressed, holm[i] <= 0.05);
      assert.equal(result.rule, "fisher-exact-one-sided");
    });
    assert.deepEqual(results.map((r) => r.regressed), [true, false, false]);
    // The borderline unit (Fisher one-sided p = 0.0706) is flagged on its own at alpha 0.1, not in
    // the family: its Holm-adjusted p is 2 × 0.0706 = 0.1412.
    assert.equal(raw[2].toFixed(4), "0.0706");
    assert.equal(results[2].p_adjusted.toFixed(4), "0.1412");
    assert.equal(detectRegression(units[2].prior, units[2].current, { alpha: 0.1 }).regressed, true);
    assert.equal(detectRegressions(units, { alpha: 0.1 })[2].regressed, false);
  });

  it("with one comparison gives detectRegression's verdict, and takes Benjamini-Hochberg on request", () => {
    const [single] = detectRegressions([units[0]], { margin: 0.05 });
    const alone = detectRegression(units[0].prior, units[0].current, { margin: 0.05 });
    assert.equal(single.regressed, alone.regressed);
    assert.equal(single.p_adjusted, alone.p_value);
    const bh = detectRegressions(units, { adjustment: "benjamini-hochberg" });
    assert.deepEqual(bh.map((r) => r.p_adjusted), benjaminiHochbergAdjust(bh.map((r) => r.p_value)));
    assert.ok(bh.every((r) => r.adjustment === "benjamini-hochberg"));
    assert.deepEqual(detectRegressions([]), []);
    assert.throws(() => detectRegressions(units, { adjustment: "bonferroni" as never }), /adjustment must be "holm" or "benjamini-hochberg"; got bonferroni/);
  });

  it("holds the family-wise false-alarm rate of 12 and 24 unchanged units at alpha (exact)", () => {
    // Units are independent and none regressed (same true rate before and after, n = 50 each).
    // Raw: P(any p <= alpha) = 1 - (1 - P(p <= alpha))^m. Holm flags some unit exactly when the
    // smallest p <= alpha/m, so its rate is 1 - (1 - P(p <= alpha/m))^m. P(p <= c) by enumeration.
    const n = 50;
    const expected: Record<string, [string, string]> = { "0.5/12": ["0.2947", "0.0235"], "0.5/24": ["0.5025", "0.0231"], "0.8/12": ["0.2957", "0.0237"], "0.8/24": ["0.5040", "0.0241"] };
    for (const p of [0.5, 0.8]) {
      const outcomes: Array<[number, number]> = [];
      for (let k1 = 0; k1 <= n; k1++) {
        for (let k2 = 0; k2 <= n; k2++) outcomes.push([detectRegression({ k: k1, n }, { k: k2, n }).p_value, binomialPmf(k1, n, p) * binomialPmf(k2, n, p)]);
      }
      const atMost = (c: number) => outcomes.reduce((sum, [pValue, weight]) => sum + (pValue <= c ? weight : 0), 0);
      for (const m of [12, 24]) {
        const raw = 1 - (1 - atMost(0.05)) ** m;
        const holm = 1 - (1 - atMost(0.05 / m)) ** m;
        assert.deepEqual([raw.toFixed(4), holm.toFixed(4)], expected[`${p}/${m}`], `p ${p}, ${m} units`);
        assert.ok(holm <= 0.05);
      }
    }
  });
});
