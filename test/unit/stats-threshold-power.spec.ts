import assert from "node:assert/strict";
import {
  checkpointAlpha,
  createThresholdTest,
  fixedNCritical,
  fixedNExactPower,
  thresholdOperatingCharacteristics,
  type ThresholdTestOptions,
} from "../../coordinator/stats/sequential-threshold.js";

const fixed4 = (x: number) => x.toFixed(4);

/** Runs a test over a fixed outcome sequence; returns the decision, reason and episodes used. */
function feed(options: ThresholdTestOptions, outcomes: readonly boolean[]) {
  const test = createThresholdTest(options);
  let decision = "continue";
  for (const outcome of outcomes) {
    decision = test.update(outcome);
    if (decision !== "continue") break;
  }
  return { decision, reason: test.state().reason, n: test.state().n };
}

describe("threshold test at the episode budget", () => {
  const defaults = { target: 0.8, alpha: 0.05, maxEpisodes: 100 };

  it("spends the alpha the interim looks left at an exactly computed final look", () => {
    const state = createThresholdTest(defaults).state();
    assert.equal(state.final_look, true);
    assert.equal(state.final_critical, 88);
    assert.equal(fixed4(state.alpha_spent_interim), "0.0272");
    assert.equal(fixed4(state.alpha_spent), "0.0428");
    assert.ok(state.alpha_spent <= 0.05);
    const without = createThresholdTest({ ...defaults, finalLook: false }).state();
    assert.equal(without.final_critical, null);
    assert.equal(fixed4(without.alpha_spent), "0.0272");
  });

  it("passes at the final look with the critical count, and is inconclusive one short of it", () => {
    // Successes spread evenly enough that no boundary is crossed before episode 100.
    const spread = (k: number) => Array.from({ length: 100 }, (_, i) => Math.floor(((i + 1) * k) / 100) > Math.floor((i * k) / 100));
    assert.deepEqual(feed(defaults, spread(88)), { decision: "pass", reason: "final_look", n: 100 });
    assert.deepEqual(feed(defaults, spread(87)), { decision: "inconclusive", reason: "max_episodes", n: 100 });
    assert.deepEqual(feed({ ...defaults, finalLook: false }, spread(88)), { decision: "inconclusive", reason: "max_episodes", n: 100 });
    assert.throws(() => createThresholdTest({ ...defaults, finalLook: "yes" } as never), /finalLook must be a boolean; got yes/);
  });

  it("computes the same outcome probabilities as enumerating every sequence (budget 12)", () => {
    const options = { target: 0.6, alpha: 0.1, beta: 0.2, maxEpisodes: 12 };
    const runs = Array.from({ length: 1 << 12 }, (_, mask) => {
      const outcomes = Array.from({ length: 12 }, (_, i) => ((mask >> i) & 1) === 1);
      return { k: outcomes.filter(Boolean).length, ...feed(options, outcomes) };
    });
    for (const p of [0.45, 0.6, 0.8]) {
      const enumerated = { pass: 0, fail: 0, inconclusive: 0, expected_episodes: 0 };
      for (const { k, decision, n } of runs) {
        const weight = p ** k * (1 - p) ** (12 - k);
        enumerated[decision as "pass" | "fail" | "inconclusive"] += weight;
        enumerated.expected_episodes += weight * n;
      }
      const exact = thresholdOperatingCharacteristics(options, p);
      for (const key of ["pass", "fail", "inconclusive", "expected_episodes"] as const) {
        assert.ok(Math.abs(exact[key] - enumerated[key]) < 1e-12, `p=${p} ${key}: ${exact[key]} vs ${enumerated[key]}`);
      }
    }
  });

  it("never passes falsely more often than alpha: pass probability rises with the true rate", () => {
    for (const target of [0.7, 0.8, 0.9]) {
      let previous = 0;
      for (let p = 0.5; p <= target + 1e-9; p += 0.02) {
        const { pass } = thresholdOperatingCharacteristics({ target, alpha: 0.05, maxEpisodes: 100 }, p);
        assert.ok(pass >= previous - 1e-15 && pass <= 0.05, `target ${target}, p ${p}: ${pass}`);
        previous = pass;
      }
    }
  });

  it("reproduces the power table of docs/statistics.md (budget 100, alpha 0.05, beta 0.1)", () => {
    // [target, true rate, pass without final look, pass with it, fixed-n exact test, expected episodes]
    const table: Array<[number, number, string, string, string, string]> = [
      [0.7, 0.7, "0.0287", "0.0477", "0.0479", "92.87"],
      [0.7, 0.75, "0.1271", "0.2444", "0.2864", "90.76"],
      [0.7, 0.8, "0.4364", "0.6744", "0.7389", "77.42"],
      [0.7, 0.85, "0.8519", "0.9611", "0.9779", "52.64"],
      [0.8, 0.8, "0.0272", "0.0428", "0.0469", "91.95"],
      [0.8, 0.85, "0.1586", "0.2812", "0.3474", "89.30"],
      [0.8, 0.9, "0.6099", "0.8119", "0.8761", "69.63"],
      [0.8, 0.95, "0.9832", "0.9962", "0.9995", "37.87"],
      [0.9, 0.9, "0.0183", "0.0336", "0.0237", "94.68"],
      [0.9, 0.95, "0.2537", "0.4613", "0.4360", "89.27"],
    ];
    for (const [target, p, without, withFinal, fixedN, episodes] of table) {
      const options = { target, alpha: 0.05, maxEpisodes: 100 };
      const noFinal = thresholdOperatingCharacteristics({ ...options, finalLook: false }, p);
      const final = thresholdOperatingCharacteristics(options, p);
      const row = `target ${target}, p ${p}`;
      assert.equal(fixed4(noFinal.pass), without, row);
      assert.equal(fixed4(final.pass), withFinal, row);
      assert.equal(fixed4(fixedNExactPower(target, 0.05, 100, p)), fixedN, row);
      assert.equal(final.expected_episodes.toFixed(2), episodes, row);
      // The final look only turns inconclusive runs into passes.
      assert.equal(final.fail, noFinal.fail);
      assert.equal(final.expected_episodes, noFinal.expected_episodes);
      assert.ok(Math.abs(final.pass + final.fail + final.inconclusive - 1) < 1e-12);
    }
    assert.deepEqual([0.7, 0.8, 0.9].map((target) => createThresholdTest({ target, alpha: 0.05, maxEpisodes: 100 }).state().final_critical), [79, 88, 96]);
  });

  it("with a budget of 500 spends 3.74% at the boundaries and 4.81% with the final look", () => {
    const options = { target: 0.8, alpha: 0.05, maxEpisodes: 500 };
    const state = createThresholdTest(options).state();
    assert.equal(state.final_critical, 419);
    assert.equal(fixed4(state.alpha_spent_interim), "0.0374");
    assert.equal(fixed4(state.alpha_spent), "0.0481");
    const below = [false, true].map((finalLook) => fixed4(thresholdOperatingCharacteristics({ ...options, finalLook }, 0.78).pass));
    assert.deepEqual(below, ["0.0148", "0.0153"]);
  });
});

describe("fixed-n exact binomial test", () => {
  it("rejects at the smallest count whose upper tail is within alpha", () => {
    // Binomial(10, 0.5): P(X >= 9) = 11/1024 <= 0.05 < P(X >= 8) = 56/1024.
    assert.equal(fixedNCritical(0.5, 0.05, 10), 9);
    assert.ok(Math.abs(fixedNExactPower(0.5, 0.05, 10, 0.8) - (10 * 0.8 ** 9 * 0.2 + 0.8 ** 10)) < 1e-14);
    assert.ok(Math.abs(fixedNExactPower(0.5, 0.05, 10, 0.5) - 11 / 1024) < 1e-15);
    assert.equal(fixedNCritical(0.8, 0.05, 100), 87);
    // 0.8^5 = 0.33 > 0.05: five episodes cannot show 80%.
    assert.equal(fixedNExactPower(0.8, 0.05, 5, 0.99), 0);
    assert.throws(() => fixedNExactPower(0.8, 0.05, 0, 0.9), /n must be a positive integer; got 0/);
  });
});

describe("alpha across checkpoints", () => {
  it("gives checkpoint j the share 6 / (π² j²) of the family's alpha, summing to at most the family's", () => {
    assert.equal(checkpointAlpha(0.05, 1).toFixed(5), "0.03040");
    assert.equal(checkpointAlpha(0.05, 2).toFixed(5), "0.00760");
    assert.equal(checkpointAlpha(0.05, 3).toFixed(5), "0.00338");
    assert.equal(checkpointAlpha(0.05, 10).toFixed(6), "0.000304");
    let sum = 0;
    for (let j = 1; j <= 100000; j++) sum += checkpointAlpha(0.05, j);
    assert.ok(sum <= 0.05 && sum > 0.05 * (1 - 1e-5), `sum ${sum}`);
    assert.throws(() => checkpointAlpha(0.05, 0), /checkpoint must be a positive integer \(1 = the submitted policy\); got 0/);
    assert.throws(() => checkpointAlpha(1.5, 1), /familyAlpha must be in \(0, 1\); got 1.5/);
  });

  it("holds the family's false-pass rate where a fresh alpha per checkpoint does not (docs/statistics.md)", () => {
    // Worst case: every checkpoint's policy exactly at target 0.8, each test run to its end (budget 100).
    const size = (alpha: number) => createThresholdTest({ target: 0.8, alpha, maxEpisodes: 100 }).state().alpha_spent;
    const family = (alphaOf: (j: number) => number, checkpoints: number) => {
      let none = 1;
      for (let j = 1; j <= checkpoints; j++) none *= 1 - size(alphaOf(j));
      return 1 - none;
    };
    const fresh = [1, 2, 5, 10].map((m) => family(() => 0.05, m));
    const spent = [1, 2, 5, 10].map((m) => family((j) => checkpointAlpha(0.05, j), m));
    assert.deepEqual(fresh.map((x) => (100 * x).toFixed(1)), ["4.3", "8.4", "19.7", "35.4"]);
    assert.deepEqual(spent.map((x) => (100 * x).toFixed(1)), ["2.3", "3.0", "3.5", "3.7"]);
    const power = [1, 2, 3].map((j) => thresholdOperatingCharacteristics({ target: 0.8, alpha: checkpointAlpha(0.05, j), maxEpisodes: 100 }, 0.9).pass);
    assert.deepEqual(power.map((x) => x.toFixed(2)), ["0.72", "0.59", "0.46"]);
  });
});
