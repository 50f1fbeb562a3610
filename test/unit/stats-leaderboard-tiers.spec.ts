import assert from "node:assert/strict";
import { fisherExactLess } from "../../coordinator/stats/fisher-exact.js";
import { fisherExactLessFast, hypergeometricCdf } from "../../coordinator/stats/hypergeometric.js";
import { rankEntries, TIER_CALIBRATION, type LeaderboardEntry, type PosteriorCache } from "../../coordinator/stats/leaderboard-tiers.js";
import { betaBinomialRate, type HeadlinePrior } from "../../coordinator/stats/beta-binomial-rate.js";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { referenceRateMass, type Cells } from "../support/beta-binomial-reference.js";
import { simulateTiers } from "../../coordinator/stats/leaderboard-tiers-simulation.js";
import { binomialSample, mulberry32 } from "../../coordinator/stats/simulation.js";

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

/**
 * P(μ_u <= μ_v) for two entries' model-level rates, from posteriors computed independently
 * (test/support/beta-binomial-reference.ts: equal steps in μ) and compared step by step here.
 */
function notGreater(u: Cells, v: Cells): number {
  const a = referenceRateMass(u);
  const b = referenceRateMass(v);
  let above = 0;
  let sum = 0;
  for (let i = a.length - 1; i >= 0; i--) {
    sum += a[i] * (above + b[i] / 2);
    above += b[i];
  }
  return sum;
}

/** A fitted headline prior, other than the default, for entries that carry their own. */
const FITTED_PRIOR: HeadlinePrior = {
  rate: { family: "beta", parameters: { a: 2, b: 1 } }, icc: { family: "beta", parameters: { a: 1, b: 19 } }, source: "fitted", fitted_on_runs: 12, fitted_at: "2026-11-01T00:00:00Z",
};

const order = (entries: LeaderboardEntry[], alpha?: number) => rankEntries(entries, { alpha }).entries.map((e) => [e.id, e.rank, e.tier]);

describe("hypergeometric tail", () => {
  it("is Fisher's one-sided p-value of fisher-exact.ts", () => {
    for (const [n1, n2] of [[0, 5], [5, 0], [1, 1], [3, 3], [10, 7], [30, 30], [100, 60], [400, 1000]]) {
      for (let k1 = 0; k1 <= n1; k1 += Math.max(1, Math.floor(n1 / 12))) {
        for (let k2 = 0; k2 <= n2; k2 += Math.max(1, Math.floor(n2 / 12))) {
          const slow = fisherExactLess(k1, n1, k2, n2);
          const fast = fisherExactLessFast(k1, n1, k2, n2);
          assert.ok(Math.abs(fast - slow) <= 1e-12 + 1e-9 * slow, `${k1}/${n1} vs ${k2}/${n2}: ${fast} vs ${slow}`);
        }
      }
    }
  });

  it("gives hand-checked values", () => {
    // 3 of 6 successes, 3 drawn: P(X = 0) = 1 / C(6, 3).
    close(hypergeometricCdf(0, 6, 3, 3), 1 / 20, 1e-15, "P(X = 0)");
    // 15 of 20, 10 drawn: X >= 5, P(X = 5) = C(15, 5) / C(20, 10).
    close(hypergeometricCdf(5, 20, 15, 10), 3003 / 184756, 1e-15, "P(X <= 5)");
    assert.equal(hypergeometricCdf(4, 20, 15, 10), 0);
    assert.equal(hypergeometricCdf(10, 20, 15, 10), 1);
    assert.throws(() => hypergeometricCdf(1, 5, 6, 2), /successes must be an integer in 0..5; got 6/);
  });
});

describe("leaderboard order and tiers", () => {
  it("puts two entries far apart in two tiers", () => {
    const cells = (k: number) => [{ k, n: 25 }, { k, n: 25 }, { k, n: 25 }, { k, n: 25 }];
    const ranking = rankEntries([{ id: "b", k: 48, n: 100, clusters: cells(12) }, { id: "a", k: 88, n: 100, clusters: cells(22) }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.rank, e.tier]), [["a", 1, 1], ["b", 2, 2]]);
    assert.equal(ranking.tiers, 2);
    const [boundary] = ranking.boundaries;
    close(boundary.posterior_not_better, notGreater(cells(22), cells(12)), 2e-4, "against the independent posteriors");
    assert.ok(boundary.posterior_not_better < 1e-3, `${boundary.posterior_not_better}`);
    assert.equal(boundary.separated, true);
    assert.deepEqual(boundary.closest, { above: "a", below: "b" });
    assert.equal(ranking.rule.per_pair_level, (TIER_CALIBRATION * 0.05) / 2);
    assert.equal(ranking.rule.per_pair_level, 0.015);
    assert.deepEqual(ranking.entries[0].ci95, betaBinomialRate(cells(22)).ci);
    assert.equal(ranking.entries[0].interval_method, "beta-binomial-posterior");
  });

  it("takes an entry without cells as one cell, as the headline does", () => {
    const ranking = rankEntries([{ id: "b", k: 50, n: 100 }, { id: "a", k: 90, n: 100 }]);
    assert.deepEqual(ranking.entries[0].ci95, betaBinomialRate([{ k: 90, n: 100 }]).ci);
    assert.equal(ranking.entries[0].clusters, 1);
    // One cell each says little about a new cell: 90/100 and 50/100 share a tier.
    close(ranking.boundaries[0].posterior_not_better, notGreater([{ k: 90, n: 100 }], [{ k: 50, n: 100 }]), 2e-4, "one cell each");
    close(ranking.boundaries[0].posterior_not_better, 0.0396, 1e-4, "pinned");
    assert.equal(ranking.tiers, 1);
  });

  it("keeps two close entries in one tier", () => {
    const ranking = rankEntries([{ id: "a", k: 80, n: 100 }, { id: "b", k: 75, n: 100 }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.tier]), [["a", 1], ["b", 1]]);
    assert.equal(ranking.boundaries[0].separated, false);
    close(ranking.boundaries[0].posterior_not_better, notGreater([{ k: 80, n: 100 }], [{ k: 75, n: 100 }]), 2e-4, "P(80/100 not better than 75/100)");
  });

  it("keeps many identical entries in one tier, ordered by id", () => {
    const entries = ["j", "c", "a", "h", "e", "b", "i", "d", "g", "f"].map((id) => ({ id, k: 40, n: 50 }));
    const ranking = rankEntries(entries);
    assert.equal(ranking.tiers, 1);
    assert.deepEqual(ranking.entries.map((e) => e.id).join(""), "abcdefghij");
    assert.deepEqual(ranking.entries.map((e) => e.rank), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Two identical posteriors: either is as likely the better.
    for (const b of ranking.boundaries) close(b.posterior_not_better, 0.5, 1e-12, `boundary after ${b.after_rank}`);
    assert.equal(ranking.rule.per_pair_level, (0.6 * 0.05) / 18);
  });

  it("orders by the interval's lower bound, not by the rate: 3/3 below 80/100", () => {
    const ranking = rankEntries([{ id: "perfect", k: 3, n: 3 }, { id: "solid", k: 80, n: 100 }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.rate]), [["solid", 0.8], ["perfect", 1]]);
    close(ranking.entries[0].ci95[0], 0.4323, 1e-4, "80/100 lower bound");
    close(ranking.entries[1].ci95[0], 0.3970, 1e-4, "3/3 lower bound");
    // Nothing can show 80/100 better than 3/3.
    close(ranking.boundaries[0].posterior_not_better, notGreater([{ k: 80, n: 100 }], [{ k: 3, n: 3 }]), 2e-4, "P(80/100 not better than 3/3)");
    assert.equal(ranking.tiers, 1);
  });

  it("breaks ties by rate, then n, then id", () => {
    // 0 successes: every lower bound is 0 and every rate 0, so n decides, then id.
    assert.deepEqual(order([{ id: "small", k: 0, n: 10 }, { id: "b", k: 0, n: 20 }, { id: "a", k: 0, n: 20 }]).map((e) => e[0]), ["a", "b", "small"]);
  });

  it("gives the posterior probabilities an independent integration gives, and compares them with 0.6 alpha / (2 (m - 1))", () => {
    // 3/3 against 0/3, one cell each: P = 0.0101, below 0.015: two tiers (Fisher's exact test, the
    // rule before issue 25, gave 0.05 and one tier).
    const pair = rankEntries([{ id: "lo", k: 0, n: 3 }, { id: "hi", k: 3, n: 3 }]);
    close(pair.boundaries[0].posterior_not_better, notGreater([{ k: 3, n: 3 }], [{ k: 0, n: 3 }]), 2e-4, "3/3 against 0/3");
    close(pair.boundaries[0].posterior_not_better, 0.01006, 1e-5, "pinned");
    assert.equal(pair.tiers, 2);
    assert.equal(rankEntries([{ id: "lo", k: 0, n: 3 }, { id: "hi", k: 3, n: 3 }], { alpha: 0.01 }).tiers, 1);
  });

  it("needs every pair across a boundary: an entry no test can place holds its neighbours in one tier", () => {
    // On four cells each, 90/100 is far above 60/100, but not above 4/5 on one cell, which the
    // lower bound ranks last.
    const four = (k: number) => [{ k, n: 25 }, { k, n: 25 }, { k, n: 25 }, { k, n: 25 }];
    const skipped = rankEntries([{ id: "x", k: 88, n: 100, clusters: four(22) }, { id: "y", k: 60, n: 100, clusters: four(15) }, { id: "z", k: 4, n: 5 }]);
    assert.deepEqual(skipped.entries.map((e) => e.id), ["x", "y", "z"]);
    assert.deepEqual(skipped.boundaries[0].closest, { above: "x", below: "z" });
    close(skipped.boundaries[0].posterior_not_better, notGreater(four(22), [{ k: 4, n: 5 }]), 2e-4, "x against z");
    assert.equal(skipped.boundaries[0].separated, false);
    assert.ok(notGreater(four(22), four(15)) < 0.015);
    assert.equal(skipped.tiers, 1);
  });

  it("with cells: ci95 is the run's headline, and the tier test is the posterior difference of compare", () => {
    const expert = [{ k: 7, n: 7 }, { k: 6, n: 6 }, { k: 7, n: 7 }];
    const novice = [{ k: 4, n: 7 }, { k: 3, n: 6 }, { k: 4, n: 7 }];
    const ranking = rankEntries([{ id: "novice", k: 11, n: 20, clusters: novice }, { id: "expert", k: 20, n: 20, clusters: expert }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.tier, e.clusters]), [["expert", 1, 3], ["novice", 2, 3]]);
    assert.deepEqual(ranking.entries[0].ci95, betaBinomialRate(expert).ci);
    assert.deepEqual(ranking.entries[1].ci95, betaBinomialRate(novice).ci);
    assert.equal(ranking.entries[0].interval_method, "beta-binomial-posterior");
    // The same posterior difference as unpaired compare's P(A > B), computed there by convolution.
    const difference = betaBinomialDifference(expert, novice);
    close(ranking.boundaries[0].posterior_not_better, 1 - difference.probability_a_greater, 1e-6, "P(expert not better)");
    close(ranking.boundaries[0].posterior_not_better, notGreater(expert, novice), 2e-4, "against the independent posteriors");
    close(ranking.boundaries[0].posterior_not_better, 0.00098, 1e-5, "pinned");
    // The board: 12/12 and 7/12 on three cells no longer share a tier.
    const board = rankEntries([
      { id: "a", k: 12, n: 12, clusters: [{ k: 4, n: 4 }, { k: 4, n: 4 }, { k: 4, n: 4 }] },
      { id: "b", k: 7, n: 12, clusters: [{ k: 3, n: 4 }, { k: 2, n: 4 }, { k: 2, n: 4 }] },
    ]);
    assert.equal(board.tiers, 2);
    close(board.boundaries[0].posterior_not_better, 0.00677, 1e-5, "12/12 against 7/12");
    // Empty cells are left out.
    const oneCell = rankEntries([{ id: "a", k: 80, n: 100, clusters: [{ k: 80, n: 100 }, { k: 0, n: 0 }] }]);
    assert.deepEqual(oneCell.entries[0].ci95, betaBinomialRate([{ k: 80, n: 100 }]).ci);
    assert.equal(oneCell.entries[0].clusters, 1);
  });

  it("does not depend on the order of the entries", () => {
    const random = mulberry32(11);
    // Three groups of rates (0.2, 0.5, 0.8), 8 cells of 25-75 episodes, and a pair of identical entries.
    const entries: LeaderboardEntry[] = Array.from({ length: 40 }, (_, i) => {
      const clusters = Array.from({ length: 8 }, () => {
        const n = 25 + Math.floor(random() * 50);
        return { k: Math.min(n, Math.max(0, Math.round(n * (0.2 + 0.3 * (i % 3)) + (random() - 0.5) * 4))), n };
      });
      return { id: `policy-${i}`, k: clusters.reduce((s, c) => s + c.k, 0), n: clusters.reduce((s, c) => s + c.n, 0), clusters };
    });
    const twin = Array.from({ length: 8 }, () => ({ k: 15, n: 30 }));
    entries.push({ id: "twin-a", k: 120, n: 240, clusters: twin }, { id: "twin-b", k: 120, n: 240, clusters: twin });
    const expected = rankEntries(entries);
    for (let shuffle = 0; shuffle < 5; shuffle++) {
      const shuffled = [...entries];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
      }
      assert.deepEqual(rankEntries(shuffled), expected);
    }
    assert.ok(expected.tiers > 1 && expected.tiers < 40, `tiers ${expected.tiers}`);
  });

  it("ranks the same with a shared cache of posteriors as without one (as the tier simulation ranks)", () => {
    const random = mulberry32(12);
    const posteriors: PosteriorCache = new Map();
    const draw = (n: number, p: number) => binomialSample(random, n, p);
    for (let board = 0; board < 60; board++) {
      const entries: LeaderboardEntry[] = [0.3, 0.5, 0.5, 0.8].map((p, i) => ({ id: `e${i}`, k: draw(12, p), n: 12 }));
      // One entry with cells, whose counts repeat across boards too; one with a prior of its own.
      const cells = [{ k: draw(6, 0.6), n: 6 }, { k: draw(6, 0.6), n: 6 }];
      entries.push({ id: "cells", k: cells[0].k + cells[1].k, n: 12, clusters: cells });
      entries.push({ id: "prior", k: entries[0].k, n: 12, prior: FITTED_PRIOR });
      assert.deepEqual(rankEntries(entries, { posteriors }), rankEntries(entries), `board ${board}`);
    }
    assert.ok(posteriors.size > 0 && posteriors.size < 6 * 60, `${posteriors.size} posteriors for 360 entries: counts repeat`);
  });

  it("handles an empty board and a board of one", () => {
    assert.deepEqual(rankEntries([]).entries, []);
    assert.equal(rankEntries([]).tiers, 0);
    const one = rankEntries([{ id: "only", k: 1, n: 2 }]);
    assert.deepEqual(one.entries.map((e) => [e.rank, e.tier]), [[1, 1]]);
    assert.deepEqual(one.boundaries, []);
  });

  it("rejects entries it cannot rank, saying which", () => {
    assert.throws(() => rankEntries([{ id: "a", k: 1, n: 2 }, { id: "a", k: 1, n: 3 }]), /entry 1: id "a" appears twice/);
    assert.throws(() => rankEntries([{ id: "a", k: 0, n: 0 }]), /entry 0 \("a"\): n must be a positive integer; got 0/);
    assert.throws(() => rankEntries([{ id: "a", k: 5, n: 4 }]), /k must be an integer in 0..4; got 5/);
    assert.throws(() => rankEntries([{ id: "a", k: 5, n: 10, clusters: [{ k: 2, n: 5 }, { k: 2, n: 5 }] }]), /clusters add up to 4\/10, not k\/n = 5\/10/);
    assert.throws(() => rankEntries([{ id: "", k: 1, n: 2 }]), /entry 0: id must be a non-empty string/);
    assert.throws(() => rankEntries([], { alpha: 0.5 }), /alpha must be in \(0, 0.5\); got 0.5/);
  });

  it("ranks 200 entries in lower-bound order", () => {
    const random = mulberry32(3);
    const entries = Array.from({ length: 200 }, (_, i) => {
      const n = 500 + Math.floor(random() * 500);
      const p = 0.05 + 0.9 * random();
      let k = 0;
      for (let e = 0; e < n; e++) if (random() < p) k++;
      return { id: `p${i}`, k, n };
    });
    // Timing is a bench figure (timing.rank_entries.200_entries), not an assertion here.
    const ranking = rankEntries(entries);
    assert.equal(ranking.entries.length, 200);
    for (let i = 1; i < 200; i++) assert.ok(ranking.entries[i].ci95[0] <= ranking.entries[i - 1].ci95[0]);
  });
});

describe("tier rule error rate (seeded simulation)", () => {
  it("rarely splits equal entries: family-wise error <= alpha", function () {
    this.timeout(120_000);
    for (const [rates, n] of [[[0.5, 0.5], 5], [[0.5, 0.5], 50], [[0.7, 0.7, 0.7, 0.7, 0.7], 100], [[0.3, 0.3, 0.6, 0.6, 0.9, 0.9], 200]] as const) {
      const result = simulateTiers({ rates, n }, 400, 20240701);
      assert.ok(result.familyWiseError <= 0.05, `${rates.join(",")} at n=${n}: ${result.familyWiseError}`);
    }
  });

  it("with cells that differ (ICC 0.1 on 4 cells): family-wise error <= alpha", function () {
    this.timeout(60_000);
    const result = simulateTiers({ rates: [0.7, 0.7], n: 200, cells: 4, icc: 0.1 }, 300, 20240702);
    assert.ok(result.familyWiseError <= 0.05, `${result.familyWiseError}`);
  });

  it("separates policies 40 points apart at n = 100 on four cells most of the time", function () {
    this.timeout(60_000);
    const result = simulateTiers({ rates: [0.5, 0.9], n: 100, cells: 4 }, 200, 7);
    assert.equal(result.familyWiseError, 0);
    assert.ok(result.allSeparated > 0.9, `power ${result.allSeparated}`);
  });
});
