import assert from "node:assert/strict";
import { agreement } from "../../coordinator/stats/agreement.js";
import { clusteredRateInterval, designEffect } from "../../coordinator/stats/clustered-rate.js";
import { studentTCdf, studentTQuantile, tForConfidence } from "../../coordinator/stats/student-t.js";
import { cellRateSample, mulberry32, simulateClusteredCoverage } from "../../coordinator/stats/simulation.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

describe("Student t distribution", () => {
  it("gives the tabulated quantiles", () => {
    // Known values (e.g. R's qt, scipy.stats.t.ppf) to 9-10 digits.
    close(studentTQuantile(0.975, 3), 3.182446305, 1e-9, "t(0.975, 3)");
    close(studentTQuantile(0.975, 7), 2.364624252, 1e-9, "t(0.975, 7)");
    close(studentTQuantile(0.975, 1), 12.70620474, 1e-7, "t(0.975, 1)");
    close(studentTQuantile(0.995, 3), 5.840909310, 1e-8, "t(0.995, 3)");
    close(studentTQuantile(0.975, 30), 2.042272456, 1e-9, "t(0.975, 30)");
    close(studentTQuantile(0.9, 5), 1.475884049, 1e-9, "t(0.9, 5)");
    close(studentTQuantile(0.025, 3), -3.182446305, 1e-9, "t(0.025, 3)");
    close(tForConfidence(0.95, 1000), 1.962339081, 1e-9, "t(0.975, 1000)");
    assert.equal(studentTQuantile(0.5, 4), 0);
  });

  it("has the closed-form CDF with one and two degrees of freedom", () => {
    // ν = 1 is Cauchy: 1/2 + atan(t)/π; ν = 2: 1/2 + t / (2 sqrt(2 + t²)).
    for (const t of [-3, -0.4, 0.7, 2, 10]) {
      close(studentTCdf(t, 1), 0.5 + Math.atan(t) / Math.PI, 1e-13, `Cauchy CDF at ${t}`);
      close(studentTCdf(t, 2), 0.5 + t / (2 * Math.sqrt(2 + t * t)), 1e-13, `t2 CDF at ${t}`);
    }
  });

  it("rejects impossible arguments", () => {
    assert.throws(() => studentTQuantile(1, 3), /p must be in \(0, 1\); got 1/);
    assert.throws(() => studentTQuantile(0.9, 0), /degrees of freedom must be a positive finite number; got 0/);
  });
});

describe("clustered rate interval", () => {
  const cells4 = [
    { k: 20, n: 25 },
    { k: 22, n: 25 },
    { k: 15, n: 25 },
    { k: 23, n: 25 },
  ];

  it("is plain Wilson of the totals with zero or one non-empty cluster", () => {
    assert.deepEqual(clusteredRateInterval([{ k: 80, n: 100 }, { k: 0, n: 0 }]), {
      ci: wilsonInterval(80, 100),
      interval_method: "wilson",
      clusters: 1,
      design_effect: 1,
      effective_n: 100,
      df: null,
    });
    assert.deepEqual(clusteredRateInterval([]).ci, [0, 1]);
    assert.equal(clusteredRateInterval([], 0.9).effective_n, 0);
    assert.deepEqual(clusteredRateInterval([{ k: 3, n: 7 }], 0.9).ci, wilsonInterval(3, 7, 0.9));
  });

  it("widens by the CR1 design effect with a t critical value on clusters - 1 df", () => {
    // p = 0.8; residuals 0, 2, -5, 3: V_CR1 = 4/3 · 38 / 100² = 0.0050667, binomial 0.0016, deff 3.1667.
    const result = clusteredRateInterval(cells4);
    assert.equal(result.interval_method, "wilson-design-effect-t");
    assert.equal(result.clusters, 4);
    assert.equal(result.df, 3);
    close(result.design_effect, 19 / 6, 1e-12, "deff");
    close(result.effective_n, 600 / 19, 1e-10, "effective n");
    assert.equal(result.ci[0].toFixed(4), "0.5170");
    assert.equal(result.ci[1].toFixed(4), "0.9373");
    const eight = clusteredRateInterval([40, 45, 30, 48, 41, 44, 39, 47].map((k) => ({ k, n: 50 })));
    assert.equal(eight.design_effect.toFixed(4), "4.8008");
    assert.deepEqual(eight.ci.map((x) => x.toFixed(4)), ["0.7185", "0.9094"]);
  });

  it("floors the design effect at 1, stays in [0, 1] and contains plain Wilson", () => {
    const even = clusteredRateInterval(cells4.map(() => ({ k: 20, n: 25 })));
    assert.equal(even.design_effect, 1);
    assert.deepEqual(even.ci.map((x) => x.toFixed(4)), ["0.6480", "0.8968"]);
    const none = clusteredRateInterval(cells4.map(() => ({ k: 0, n: 25 })));
    assert.equal(none.ci[0], 0);
    assert.equal(none.ci[1].toFixed(4), "0.0920");
    const all = clusteredRateInterval([{ k: 25, n: 25 }, { k: 25, n: 25 }]);
    assert.equal(all.ci[1], 1);
    assert.equal(all.ci[0].toFixed(4), "0.2365");
    const random = mulberry32(5);
    for (let i = 0; i < 200; i++) {
      const cells = Array.from({ length: 2 + Math.floor(random() * 7) }, () => {
        const n = Math.floor(random() * 40);
        return { k: Math.floor(random() * (n + 1)), n };
      });
      const k = cells.reduce((s, c) => s + c.k, 0);
      const n = cells.reduce((s, c) => s + c.n, 0);
      const [low, high] = clusteredRateInterval(cells).ci;
      const [wLow, wHigh] = wilsonInterval(k, n);
      assert.ok(0 <= low && low <= wLow + 1e-12 && wHigh <= high + 1e-12 && high <= 1, JSON.stringify(cells));
    }
  });

  it("computes the design effect of unequal clusters from the ratio estimator", () => {
    // p = 30/60 = 0.5; residuals k - p n: 5 - 5 = 0, 10 - 10 = 0, 15 - 15 = 0 -> floor 1.
    assert.equal(designEffect([{ k: 5, n: 10 }, { k: 10, n: 20 }, { k: 15, n: 30 }]), 1);
    // p = 0.5; residuals 10 - 5 = 5, 0 - 5 = -5, 20 - 20 = 0: V = 3/2 · 50 / 60² vs 0.25 / 60.
    close(designEffect([{ k: 10, n: 10 }, { k: 0, n: 10 }, { k: 20, n: 40 }]), (1.5 * 50) / 3600 / (0.25 / 60), 1e-12, "deff");
  });

  it("rejects counts that cannot be", () => {
    assert.throws(() => clusteredRateInterval([{ k: 3, n: 2 }]), /cluster 0: k must be an integer in 0..2; got 3/);
    assert.throws(() => clusteredRateInterval([{ k: 1, n: 2 }, { k: 0, n: -1 }]), /cluster 1: n must be a non-negative integer; got -1/);
    assert.throws(() => clusteredRateInterval(cells4, 1), /confidence must be in \(0, 1\); got 1/);
  });
});

describe("clustered coverage simulation", () => {
  it("draws cell rates with the requested mean and intra-cell correlation", () => {
    // Beta with a + b = 1/icc - 1 has variance icc · p(1 - p).
    const random = mulberry32(9);
    const draws = Array.from({ length: 4000 }, () => cellRateSample(random, 0.8, 0.05));
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    const variance = draws.reduce((s, x) => s + (x - mean) ** 2, 0) / (draws.length - 1);
    close(mean, 0.8, 0.003, "mean");
    close(variance, 0.05 * 0.8 * 0.2, 0.0008, "variance");
    assert.equal(cellRateSample(random, 0.8, 0), 0.8);
  });

  it("shows plain Wilson undercovering four differing cells where the clustered interval does not", () => {
    // 400 runs (scripts/bench/stats.ts runs 20 000): 4 cells, ICC 0.05, 400 episodes, p = 0.8.
    const result = simulateClusteredCoverage({ cells: 4, icc: 0.05, p: 0.8, n: 400 }, 400, 17);
    assert.ok(result.coverage.wilson < 0.7, `Wilson ${result.coverage.wilson}`);
    assert.ok(result.coverage.clustered >= 0.93, `clustered ${result.coverage.clustered}`);
    assert.ok(result.meanWidth.clustered > result.meanWidth.wilson);
  });
});

describe("clustered sim-to-real agreement", () => {
  // Scenario s replayed by three robots; agreements per scenario (of 3).
  const agreeing = [3, 3, 1, 3, 3, 2, 3, 3, 0, 3, 3, 3];
  const pairs = agreeing.flatMap((agree, s) =>
    [0, 1, 2].map((robot) => ({ sim: robot % 2 === 0, real: robot < agree ? robot % 2 === 0 : robot % 2 !== 0, cluster: `scn-${s}` })),
  );

  it("without clusters is the independent-pairs analysis", () => {
    const plain = agreement(pairs.map(({ sim, real }) => ({ sim, real })));
    assert.equal(plain.interval_method, "wilson");
    assert.deepEqual(plain.ci95, wilsonInterval(30, 36));
    assert.equal(plain.clusters, null);
    assert.equal(plain.design_effect, 1);
  });

  it("with clusters uses the cluster interval and widens kappa by the design effect", () => {
    const plain = agreement(pairs.map(({ sim, real }) => ({ sim, real })));
    const clustered = agreement(pairs);
    assert.equal(clustered.clusters, 12);
    assert.equal(clustered.interval_method, "wilson-design-effect-t");
    const expected = clusteredRateInterval(agreeing.map((k) => ({ k, n: 3 })));
    assert.deepEqual(clustered.ci95, expected.ci);
    assert.equal(clustered.design_effect, expected.design_effect);
    assert.ok(clustered.design_effect > 1);
    assert.equal(clustered.cohen_kappa, plain.cohen_kappa);
    const [pLow, pHigh] = plain.kappa_ci ?? [NaN, NaN];
    const [cLow, cHigh] = clustered.kappa_ci ?? [NaN, NaN];
    const kappa = plain.cohen_kappa ?? NaN;
    const se = (pHigh - pLow) / (2 * 1.959963985);
    // The clustered upper end is clipped at 1; the lower end shows the half-width.
    assert.equal(cHigh, 1);
    close(kappa - cLow, tForConfidence(0.95, 11) * se * Math.sqrt(expected.design_effect), 1e-6, "kappa half-width");
    // Everything else is the same analysis.
    assert.deepEqual(clustered.sim_minus_real, plain.sim_minus_real);
    assert.deepEqual(clustered.mcnemar, plain.mcnemar);
  });

  it("falls back to Wilson when every pair is one cluster", () => {
    const one = agreement(pairs.map((p) => ({ ...p, cluster: 7 })));
    assert.equal(one.interval_method, "wilson");
    assert.equal(one.clusters, 1);
    assert.deepEqual(one.ci95, wilsonInterval(30, 36));
  });
});
