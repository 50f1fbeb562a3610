import assert from "node:assert/strict";
import { clusteredRateInterval } from "../../coordinator/stats/clustered-rate.js";
import { fisherExactLess } from "../../coordinator/stats/fisher-exact.js";
import { fisherExactLessFast, hypergeometricCdf } from "../../coordinator/stats/hypergeometric.js";
import { rankEntries, type LeaderboardEntry } from "../../coordinator/stats/leaderboard-tiers.js";
import { simulateTiers } from "../../coordinator/stats/leaderboard-tiers-simulation.js";
import { mulberry32 } from "../../coordinator/stats/simulation.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

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
    const ranking = rankEntries([{ id: "b", k: 50, n: 100 }, { id: "a", k: 90, n: 100 }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.rank, e.tier]), [["a", 1, 1], ["b", 2, 2]]);
    assert.equal(ranking.tiers, 2);
    const [boundary] = ranking.boundaries;
    assert.equal(boundary.p_value, fisherExactLessFast(90, 100, 50, 100));
    assert.equal(boundary.p_adjusted, 2 * boundary.p_value);
    assert.ok(boundary.p_value < 1e-9);
    assert.deepEqual(boundary.closest, { above: "a", below: "b" });
    assert.equal(ranking.rule.per_test_level, 0.025);
    assert.deepEqual(ranking.entries[0].ci95, wilsonInterval(90, 100));
  });

  it("keeps two close entries in one tier", () => {
    const ranking = rankEntries([{ id: "a", k: 80, n: 100 }, { id: "b", k: 75, n: 100 }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.tier]), [["a", 1], ["b", 1]]);
    assert.equal(ranking.boundaries[0].separated, false);
  });

  it("keeps many identical entries in one tier, ordered by id", () => {
    const entries = ["j", "c", "a", "h", "e", "b", "i", "d", "g", "f"].map((id) => ({ id, k: 40, n: 50 }));
    const ranking = rankEntries(entries);
    assert.equal(ranking.tiers, 1);
    assert.deepEqual(ranking.entries.map((e) => e.id).join(""), "abcdefghij");
    assert.deepEqual(ranking.entries.map((e) => e.rank), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // A 40/50 against itself: P(X <= 40) for 80 of 100 successes, 50 drawn.
    for (const b of ranking.boundaries) assert.equal(b.p_value, fisherExactLessFast(40, 50, 40, 50));
    assert.equal(ranking.rule.per_test_level, 0.05 / 18);
  });

  it("orders by the interval's lower bound, not by the rate: 3/3 below 80/100", () => {
    const ranking = rankEntries([{ id: "perfect", k: 3, n: 3 }, { id: "solid", k: 80, n: 100 }]);
    assert.deepEqual(ranking.entries.map((e) => [e.id, e.rate]), [["solid", 0.8], ["perfect", 1]]);
    close(ranking.entries[0].ci95[0], 0.7112, 1e-4, "80/100 lower bound");
    close(ranking.entries[1].ci95[0], 0.4385, 1e-4, "3/3 lower bound");
    // Nothing can show 80/100 better than 3/3.
    assert.equal(ranking.boundaries[0].p_value, 1);
    assert.equal(ranking.tiers, 1);
  });

  it("breaks ties by rate, then n, then id", () => {
    // 0 successes: every lower bound is 0 and every rate 0, so n decides, then id.
    assert.deepEqual(order([{ id: "small", k: 0, n: 10 }, { id: "b", k: 0, n: 20 }, { id: "a", k: 0, n: 20 }]).map((e) => e[0]), ["a", "b", "small"]);
  });

  it("gives the hand-computed Fisher p-values, and adjusts them by 2 (m - 1)", () => {
    // 3/3 against 0/3: P = 1 / C(6, 3) = 0.05; one boundary, adjusted 0.1.
    const pair = rankEntries([{ id: "lo", k: 0, n: 3 }, { id: "hi", k: 3, n: 3 }]);
    close(pair.boundaries[0].p_value, 0.05, 1e-15, "3/3 against 0/3");
    close(pair.boundaries[0].p_adjusted, 0.1, 1e-15, "adjusted");
    assert.equal(pair.tiers, 1);
    assert.equal(rankEntries([{ id: "lo", k: 0, n: 3 }, { id: "hi", k: 3, n: 3 }], { alpha: 0.1 }).tiers, 2);
  });

  it("needs every pair across a boundary: an entry no test can place holds its neighbours in one tier", () => {
    // 10/10, 5/10, 0/10: each neighbouring pair has P = C(15, 5) / C(20, 10) = 0.016254, adjusted
    // by 2 (m - 1) = 4 to 0.065: not separated at 0.05, although 10/10 against 0/10 has P = 5e-6.
    const entries = [{ id: "top", k: 10, n: 10 }, { id: "mid", k: 5, n: 10 }, { id: "low", k: 0, n: 10 }];
    const ranking = rankEntries(entries);
    for (const b of ranking.boundaries) {
      close(b.p_value, 3003 / 184756, 1e-15, `boundary after ${b.after_rank}`);
      close(b.p_adjusted, (4 * 3003) / 184756, 1e-15, "adjusted");
    }
    assert.deepEqual(ranking.boundaries.map((b) => b.closest), [{ above: "top", below: "mid" }, { above: "mid", below: "low" }]);
    assert.equal(ranking.tiers, 1);
    assert.deepEqual(order(entries, 0.1), [["top", 1, 1], ["mid", 2, 2], ["low", 3, 3]]);

    // The pair that decides need not be adjacent: 90/100 is far above 60/100, but not above 4/5,
    // which the lower bound ranks last.
    const skipped = rankEntries([{ id: "x", k: 90, n: 100 }, { id: "y", k: 60, n: 100 }, { id: "z", k: 4, n: 5 }]);
    assert.deepEqual(skipped.entries.map((e) => e.id), ["x", "y", "z"]);
    assert.deepEqual(skipped.boundaries[0].closest, { above: "x", below: "z" });
    assert.equal(skipped.boundaries[0].p_value, fisherExactLessFast(90, 100, 4, 5));
    assert.equal(skipped.boundaries[0].separated, false);
    assert.ok(fisherExactLessFast(90, 100, 60, 100) < 1e-6);
  });

  it("reports the clustered interval and tests clustered entries at their effective n", () => {
    const cells = [{ k: 20, n: 25 }, { k: 22, n: 25 }, { k: 15, n: 25 }, { k: 23, n: 25 }];
    const plain = rankEntries([{ id: "a", k: 80, n: 100 }, { id: "b", k: 55, n: 100 }]);
    const clustered = rankEntries([{ id: "a", k: 80, n: 100, clusters: cells }, { id: "b", k: 55, n: 100 }]);
    const [a] = clustered.entries;
    assert.deepEqual(a.ci95, clusteredRateInterval(cells).ci);
    close(a.ci95[0], 0.517, 1e-3, "clustered lower bound");
    close(a.ci95[1], 0.9373, 1e-4, "clustered upper bound");
    assert.equal(a.interval_method, "wilson-design-effect-t");
    close(a.design_effect, 19 / 6, 1e-12, "design effect");
    // n_eff = 100 / (19/6) = 31.58, times (z_0.975 / t_0.975,3)² = 0.3793: 11.98, rounded down.
    assert.equal(a.test_n, 11);
    assert.deepEqual(plain.entries.map((e) => e.tier), [1, 2]);
    assert.deepEqual(clustered.entries.map((e) => e.tier), [1, 1]);
    // Rounded against the claim: 0.8 × 11 = 8.8 successes count as 8 for the upper entry.
    assert.equal(clustered.boundaries[0].p_value, fisherExactLessFast(8, 11, 55, 100));
    // One non-empty cell is plain Wilson, tested as it is.
    const oneCell = rankEntries([{ id: "a", k: 80, n: 100, clusters: [{ k: 80, n: 100 }, { k: 0, n: 0 }] }, { id: "b", k: 55, n: 100 }]);
    assert.deepEqual(oneCell.entries[0], { ...plain.entries[0] });
  });

  it("does not depend on the order of the entries", () => {
    const random = mulberry32(11);
    // Three groups of rates (0.2, 0.5, 0.8), n 100-300, and a pair of identical entries.
    const entries = Array.from({ length: 40 }, (_, i) => {
      const n = 100 + Math.floor(random() * 200);
      return { id: `policy-${i}`, k: Math.round(n * (0.2 + 0.3 * (i % 3)) + (random() - 0.5) * 10), n };
    });
    entries.push({ id: "twin-a", k: 30, n: 60 }, { id: "twin-b", k: 30, n: 60 });
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
  it("rarely splits equal entries: family-wise error <= alpha", () => {
    for (const [rates, n] of [[[0.5, 0.5], 50], [[0.7, 0.7, 0.7, 0.7, 0.7], 100], [[0.3, 0.3, 0.6, 0.6, 0.9, 0.9], 200]] as const) {
      const result = simulateTiers({ rates, n }, 400, 20240701);
      assert.ok(result.familyWiseError <= 0.05, `${rates.join(",")} at n=${n}: ${result.familyWiseError}`);
    }
  });

  it("separates policies 30 points apart at n = 100 most of the time", () => {
    const result = simulateTiers({ rates: [0.5, 0.8], n: 100 }, 400, 7);
    assert.equal(result.familyWiseError, 0);
    assert.ok(result.allSeparated > 0.9, `power ${result.allSeparated}`);
  });
});
