import assert from "node:assert/strict";
import { agreement } from "../../coordinator/stats/agreement.js";
import { fisherExactLess } from "../../coordinator/stats/fisher-exact.js";
import { detectRegression, holmAdjust } from "../../coordinator/stats/regression.js";

describe("regression detection", () => {
  it("uses Fisher's exact one-sided test: the tea-tasting table gives 17/70", () => {
    assert.ok(Math.abs(fisherExactLess(3, 4, 1, 4) - 17 / 70) < 1e-12);
    assert.equal(fisherExactLess(4, 4, 0, 4).toFixed(6), (1 / 70).toFixed(6));
  });

  it("flags a clear drop and not a small one", () => {
    const drop = detectRegression({ k: 90, n: 100 }, { k: 75, n: 100 });
    assert.equal(drop.regressed, true);
    assert.equal(drop.rule, "fisher-exact-one-sided");
    assert.ok(Math.abs(drop.diff + 0.15) < 1e-12 && drop.p_value < 0.01);
    assert.equal(drop.ci_level, 0.9);
    assert.ok(drop.ci[1] < 0);
    const noise = detectRegression({ k: 90, n: 100 }, { k: 86, n: 100 });
    assert.equal(noise.regressed, false);
    assert.ok(noise.p_value > 0.05);
  });

  it("with a margin, flags only drops shown to exceed it, and its p-value agrees with the bound", () => {
    const big = detectRegression({ k: 90, n: 100 }, { k: 70, n: 100 }, { margin: 0.05 });
    assert.equal(big.rule, "newcombe-upper-bound-below-margin");
    assert.equal(big.regressed, true);
    assert.ok(big.p_value <= 0.05);
    const small = detectRegression({ k: 90, n: 100 }, { k: 82, n: 100 }, { margin: 0.05 });
    assert.equal(small.regressed, false);
    assert.ok(small.p_value > 0.05);
    // At alpha = p_value the upper bound sits on -margin.
    const edge = detectRegression({ k: 90, n: 100 }, { k: 70, n: 100 }, { margin: 0.05, alpha: big.p_value });
    assert.ok(Math.abs(edge.ci[1] + 0.05) < 1e-6);
  });

  it("keeps the false-alarm rate at or under alpha (exact enumeration, equal true rates)", () => {
    // P(flag) = Σ over both runs' outcomes, computed exactly for n = 30 per run at three rates.
    const n = 30;
    const pmf = (k: number, p: number) => {
      let c = 1;
      for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
      return c * p ** k * (1 - p) ** (n - k);
    };
    for (const p of [0.5, 0.8, 0.95]) {
      let size = 0;
      for (let k1 = 0; k1 <= n; k1++) {
        for (let k2 = 0; k2 <= n; k2++) {
          if (detectRegression({ k: k1, n }, { k: k2, n }).regressed) size += pmf(k1, p) * pmf(k2, p);
        }
      }
      assert.ok(size <= 0.05, `false-alarm rate ${size} at p=${p}`);
    }
  });

  it("Holm-adjusts a family of p-values", () => {
    assert.deepEqual(holmAdjust([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02]);
    assert.deepEqual(holmAdjust([]), []);
  });
});

describe("sim-to-real agreement", () => {
  const table = (both: number, simOnly: number, realOnly: number, neither: number) => [
    ...Array.from({ length: both }, () => ({ sim: true, real: true })),
    ...Array.from({ length: simOnly }, () => ({ sim: true, real: false })),
    ...Array.from({ length: realOnly }, () => ({ sim: false, real: true })),
    ...Array.from({ length: neither }, () => ({ sim: false, real: false })),
  ];

  it("reports agreement, kappa and the simulator's bias", () => {
    // 20 / 5 / 10 / 15: po = 0.7, pe = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    const result = agreement(table(20, 5, 10, 15));
    assert.equal(result.n, 50);
    assert.equal(result.agreement_rate, 0.7);
    assert.ok(Math.abs((result.cohen_kappa ?? NaN) - 0.4) < 1e-12);
    assert.equal(result.ci95[0].toFixed(4), "0.5625");
    assert.equal(result.sim_success_rate.rate, 0.5);
    assert.equal(result.real_success_rate.rate, 0.6);
    assert.equal(result.mcnemar.b, 5);
    assert.equal(result.mcnemar.c, 10);
    assert.ok(Math.abs(result.sim_minus_real.diff + 0.1) < 1e-12);
  });

  it("gives kappa the delta-method standard error (Fleiss, Cohen & Everitt 1969)", () => {
    // Independent check: numerically differentiate kappa(p) and form ∇ᵀ(diag p - p pᵀ)∇ / n.
    const cells = [20, 5, 10, 15];
    const n = 50;
    const kappaOf = (p: number[]) => {
      const [a, b, c, d] = p;
      const po = a + d;
      const pe = (a + b) * (a + c) + (c + d) * (b + d);
      return (po - pe) / (1 - pe);
    };
    const p = cells.map((x) => x / n);
    const grad = p.map((_, i) => {
      const h = 1e-6;
      const up = p.slice();
      const down = p.slice();
      up[i] += h;
      down[i] -= h;
      return (kappaOf(up) - kappaOf(down)) / (2 * h);
    });
    let variance = 0;
    for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) variance += grad[i] * grad[j] * ((i === j ? p[i] : 0) - p[i] * p[j]);
    const se = Math.sqrt(variance / n);
    const result = agreement(table(20, 5, 10, 15));
    const [low, high] = result.kappa_ci ?? [NaN, NaN];
    assert.ok(Math.abs((high - low) / (2 * 1.959964) - se) < 1e-6, `se ${(high - low) / 3.92} vs ${se}`);
  });

  it("leaves kappa out when chance agreement is certain, and handles no scenarios", () => {
    const allSucceed = agreement(table(10, 0, 0, 0));
    assert.equal(allSucceed.agreement_rate, 1);
    assert.equal(allSucceed.cohen_kappa, null);
    assert.equal(allSucceed.kappa_ci, null);
    const empty = agreement([]);
    assert.equal(empty.n, 0);
    assert.equal(empty.agreement_rate, null);
    assert.deepEqual(empty.ci95, [0, 1]);
  });
});
