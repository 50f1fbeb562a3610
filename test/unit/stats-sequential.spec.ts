import assert from "node:assert/strict";
import { naiveThresholdRule } from "../../coordinator/stats/naive-threshold.js";
import { createSequentialCompare } from "../../coordinator/stats/sequential-compare.js";
import { confidenceSequence, createThresholdTest, logEvidenceAbove, lowerConfidenceBound } from "../../coordinator/stats/sequential-threshold.js";
import { simulateCompare, simulateThreshold } from "../../coordinator/stats/simulation.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";

describe("sequential threshold test", () => {
  it("computes the mixture evidence in closed form when every episode succeeds", () => {
    // With k = n and a uniform mixture on [t, 1]: M_n = (1 - t^(n+1)) / ((n+1)(1-t)) / t^n.
    const t = 0.8;
    for (const n of [1, 5, 19, 20, 60]) {
      const closed = (1 - t ** (n + 1)) / ((n + 1) * (1 - t)) / t ** n;
      assert.ok(Math.abs(logEvidenceAbove(n, n, t) - Math.log(closed)) < 1e-10, `n=${n}`);
    }
  });

  it("passes a flawless policy at the first episode the evidence reaches 1/alpha", () => {
    // Closed form above: M_19 = 17.2 < 20 <= M_20 = 20.5 for target 0.8, alpha 0.05.
    const test = createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 200 });
    for (let i = 1; i < 20; i++) assert.equal(test.update(true), "continue", `episode ${i}`);
    assert.equal(test.update(true), "pass");
    const state = test.state();
    assert.equal(state.n, 20);
    assert.equal(state.reason, "pass_boundary");
    assert.ok(state.log_e_pass >= Math.log(20));
    assert.ok(state.lower_bound > 0.8, `lower bound ${state.lower_bound} should exceed the target once passed`);
    assert.throws(() => test.update(true), /already decided "pass" after 20 episodes/);
  });

  it("fails a clearly weak policy early, and calls an undecided one inconclusive at the budget", () => {
    const weak = createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 200 });
    let decision = "continue";
    for (let i = 0; decision === "continue"; i++) decision = weak.update(i % 2 === 0);
    assert.equal(decision, "fail");
    assert.equal(weak.state().reason, "fail_boundary");
    assert.ok(weak.state().n < 40, `took ${weak.state().n} episodes`);
    const budget = createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 10 });
    for (let i = 0; i < 9; i++) budget.update(i !== 4);
    // 9/10 at target 0.8: too few episodes to show the rate, and no evidence it is below.
    assert.equal(budget.update(true), "inconclusive");
    assert.equal(budget.state().reason, "max_episodes");
  });

  it("keeps false passes at or under alpha where the naive re-checked Wilson rule does not", function () {
    // 400 seeded runs at the worst case for a false pass, true rate = target. The mixture test's
    // rate is bounded by alpha = 0.05 at any stopping time; the naive rule, checking a 95% Wilson
    // bound after every episode, passes several times as often. scripts/bench runs 20000.
    const target = 0.8;
    const runs = 400;
    const sequential = simulateThreshold(() => createThresholdTest({ target, alpha: 0.05, maxEpisodes: 200 }), target, runs, 11);
    const naive = simulateThreshold(() => naiveThresholdRule({ target, ci: 0.95, maxEpisodes: 200 }), target, runs, 11);
    // Sampling slack: 0.05 + 2.33 standard errors of a 400-run proportion.
    assert.ok(sequential.passRate <= 0.05 + 2.33 * Math.sqrt((0.05 * 0.95) / runs), `sequential false-pass ${sequential.passRate}`);
    assert.ok(naive.passRate > 0.09, `naive false-pass ${naive.passRate}`);
    const below = simulateThreshold(() => createThresholdTest({ target, alpha: 0.05, maxEpisodes: 200 }), target - 0.02, runs, 12);
    assert.ok(below.passRate <= 0.05, `sequential false-pass at target - 0.02: ${below.passRate}`);
  });

  it("still passes good policies", () => {
    const good = simulateThreshold(() => createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 300 }), 0.92, 200, 13);
    assert.ok(good.passRate >= 0.9, `pass rate at 0.92: ${good.passRate}`);
  });

  it("reports an always-valid interval wider than the fixed-n Wilson interval", () => {
    const [low, high] = confidenceSequence(80, 100, 0.05);
    const [wLow, wHigh] = wilsonInterval(80, 100, 0.95);
    assert.ok(low < wLow && high > wHigh && low > 0.6 && high < 0.95, `[${low}, ${high}]`);
    assert.ok(Math.abs(logEvidenceAbove(80, 100, lowerConfidenceBound(80, 100, 0.025)) - Math.log(40)) < 1e-6);
    assert.deepEqual(confidenceSequence(0, 0, 0.05), [0, 1]);
  });

  it("rejects options it does not know or cannot honour", () => {
    assert.throws(() => createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 10, ci: 0.9 } as never), /unknown threshold test option "ci"/);
    assert.throws(() => createThresholdTest({ target: 1.2, alpha: 0.05, maxEpisodes: 10 }), /target must be in \(0, 1\); got 1.2/);
    assert.throws(() => createThresholdTest({ target: 0.8, alpha: 0.05, maxEpisodes: 0 }), /maxEpisodes/);
  });
});

describe("sequential paired comparison", () => {
  it("stops on discordant pairs only, at Wald's boundary", () => {
    // delta 0.25: each A-only pair adds ln 1.5 to ln Λ+; the top is ln(2/0.05) = ln 40 -> 10 pairs.
    const compare = createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.25, maxPairs: 100 });
    for (let i = 0; i < 5; i++) assert.equal(compare.update({ a: true, b: true }), "continue");
    for (let i = 0; i < 9; i++) assert.equal(compare.update({ a: true, b: false }), "continue");
    assert.equal(compare.update({ a: true, b: false }), "a_better");
    const state = compare.state();
    assert.deepEqual([state.pairs, state.both, state.onlyA, state.onlyB], [15, 5, 10, 0]);
    assert.ok(Math.abs(state.log_lr_a - 10 * Math.log(1.5)) < 1e-12);
    assert.equal(state.method, "sprt-discordant-sobel-wald");
    assert.throws(() => compare.update({ a: true, b: false }), /already decided/);
  });

  it("declares no difference once both one-sided tests settle, or at the budget", () => {
    const even = createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.25, maxPairs: 1000 });
    let decision = "continue";
    for (let i = 0; decision === "continue"; i++) decision = even.update({ a: i % 2 === 0, b: i % 2 === 1 });
    assert.equal(decision, "no_difference");
    assert.equal(even.state().reason, "boundary");
    const short = createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.25, maxPairs: 3 });
    short.update({ a: true, b: true });
    short.update({ a: false, b: false });
    assert.equal(short.update({ a: true, b: false }), "no_difference");
    assert.equal(short.state().reason, "max_pairs");
  });

  it("holds its error rates in a small simulation", () => {
    const create = () => createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.3, maxPairs: 400 });
    const runs = 400;
    const null_ = simulateCompare(create, 0.4, 0.5, runs, 21);
    const alt = simulateCompare(create, 0.4, 0.8, runs, 22);
    const falseDifference = null_.rates.a_better + null_.rates.b_better;
    assert.ok(falseDifference <= 0.05 + 2.33 * Math.sqrt((0.05 * 0.95) / runs), `type I ${falseDifference}`);
    assert.ok(alt.rates.a_better >= 0.8 - 2.33 * Math.sqrt((0.8 * 0.2) / runs), `power ${alt.rates.a_better}`);
  });

  it("rejects impossible options", () => {
    assert.throws(() => createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.6, maxPairs: 10 }), /delta must be in \(0, 0.5\); got 0.6/);
    assert.throws(() => createSequentialCompare({ alpha: 0.05, beta: 0.2, delta: 0.1, maxPairs: 10, paired: true } as never), /unknown sequential compare option "paired"/);
  });
});
